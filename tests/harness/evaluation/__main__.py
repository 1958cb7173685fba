"""``python -m tests.harness.evaluation``: see the package doc."""

from tests.harness.evaluation import main

raise SystemExit(main())
