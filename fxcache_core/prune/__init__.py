"""Pruning: gc's policy, rules, plan and execution, deletion through dir fds, units
of files that go together, and disk usage (df).

Lowest first: ``policy`` (GcPolicy) and ``removal`` (one planned file);
``deletion`` (dir-fd walks); ``units`` (files that go together); ``generated``
(generated code's rules); ``rules`` (one ``_select_<rule>`` per policy field);
``plan`` (plan_gc, plan_rm, GcPlan); ``execute`` (execute_plan, GcResult);
``disk_usage`` (df)."""
