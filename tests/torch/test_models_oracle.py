"""``fxcache match`` on models from a library fxcache did not write, against torch's own lookup.

One cache per session is built (in the background, while other tests run) from the workloads of tests/harness/models.py (tiny
Hugging Face ``transformers`` models from configs, random weights, nothing
downloaded): GPT-2 compiled whole and called with a keyword, a ResNet compiled
whole and called positionally with ``mark_dynamic`` ranges (one key, two
entries), a Llama training step inside a wrapper function under automatic
dynamic, and BERT with two marked dims the graph forces equal.

Torch's lookups for every query are asked in ONE fresh process
(``tests.harness.model_runs oracle``): before each query it resets Dynamo as if the
process were new and deletes what the previous query wrote. Torch gives the same
answers every run, so they are asked once per torch (and transformers) version and
checked in (``python -m tests.harness.recorded_models`` writes
``tests/data/model-oracle-answers.json``); the session builds the cache and states the
recorded answers in its names, and fails when the versions, the queries or the build
differ from the recording. Each call is then
described to ``fxcache match`` exactly as the docs tell a user to
(``Workload.match_args``: ``--fn`` the function or model class, ``--dynamic``,
``--shapes`` by keyword, parameter name or position) and every lookup torch made
on a key the cache had must be answered, hit or miss with the entry, as torch did.

Cost on a 2-core CPU box, unloaded: about 2 minutes of CPU for the cache; the oracle
process (about a minute more) runs only when the answers are recorded.
"""

from __future__ import annotations

import json

import pytest

from tests.harness.background import builder, prebuilt
from tests.helpers import assert_match_agrees_with_lookups, run_fxcache, without_keys

pytestmark = pytest.mark.torch

# (workload, calls made in one fresh process). Comments: what torch does.
QUERIES = [
    ("gpt2_module", [{"batch": 3, "seq": 12}]),               # hit (dynamic=True)
    ("resnet_ranges", [{"batch": 5, "size": 32, "range": [2, 7]}]),   # hit, 2nd entry
    ("resnet_ranges", [{"batch": 10, "size": 32, "range": [8, 15], "as": "pixel_values"}]),  # 1st
    # Automatic dynamic: the first call hits the static key; the second, whose length
    # changed, makes that dim symbolic (described as mark_dynamic) and hits the dynamic key.
    ("llama_train", [{"batch": 2, "seq": 8}, {"batch": 2, "seq": 10, "dynamic_dims": [1]}]),
    ("llama_train", [{"batch": 2, "seq": 12}]),               # fresh first call: static, new key
    ("bert_mask", [{"batch": 2, "seq": 10}]),                 # hit: the graph makes the dims equal
    ("gpt2_module", [{"batch": 1, "seq": 8}]),                # size 1: another graph
    ("bert_mask", [{"batch": 2, "seq": 10, "mask": "bool"}]),  # a bool mask: another graph
]
# Python flags through GPT-2's **kwargs that its build did not give: Dynamo's guards on the
# kwargs fail and torch traces again; what that graph is, the guards cannot tell.
FLAG_QUERIES = [
    ("gpt2_module", [{"batch": 3, "seq": 12, "flags": {"return_dict": False}}]),
    ("gpt2_module", [{"batch": 3, "seq": 12, "flags": {"output_hidden_states": True}}]),
]
DECIDED = len(QUERIES)
QUERIES += FLAG_QUERIES


def _the_alone_query() -> int:
    """The query that depends most on process state: a fresh first call under automatic
    dynamic, right after another query made a dim dynamic in the same process."""
    return next(q for q, (w, calls) in enumerate(QUERIES)
                if w == "llama_train" and len(calls) == 1 and q > 0 and len(QUERIES[q - 1][1]) > 1)


@builder("model_cache", order=-1)  # the longest build: first
def _model_cache() -> tuple:
    """The cache of the model workloads, compiled in a process of its own under
    ``TORCH_TRACE``, which then saves its mega-cache blob beside it (the summary's
    ``blob``). The trace is explained into the session's usage store for the cache dir and
    the blob, as a user would once: the models' forwards take ``**kwargs``, and only
    Dynamo's guards there say which keywords each key was compiled with."""
    from tests.harness.background import build_dir
    from tests.harness.model_runs import build_subprocess

    root = build_dir("model-cache") / "inductor"
    trace = root.parent / "build-trace"
    summary = build_subprocess(root, save_blob=root.parent / "models.blob", trace=trace)
    for where in (root, summary["blob"]["path"]):
        proc = run_fxcache("--cache-dir", str(where), "explain", "--json", str(trace))
        if proc.returncode not in (0, 1):
            raise RuntimeError(f"fxcache explain of the model build's trace: {proc.stderr[-2000:]}")
    return root, summary


@pytest.fixture(scope="session")
def model_runs() -> dict:
    """The model cache built this session, and torch's recorded answers for its queries
    (``tests/data/model-oracle-answers.json``, :mod:`tests.harness.recorded_models`) in
    this cache's names: ``batched`` (every query in one batched oracle process) and
    ``alone`` (the alone query in a process that saw no other). Fails, naming the script
    to rerun, when the recorded answers cannot stand for torch's here."""
    pytest.importorskip("transformers")
    from tests.harness import recorded_models

    root, summary = prebuilt("model_cache")
    why = recorded_models.check(summary, [[w, calls] for w, calls in QUERIES], _the_alone_query())
    if why is not None:
        pytest.fail(why)
    answers = recorded_models.answers_for(summary)
    return {"root": root, "summary": summary, "batched": answers, "alone": answers["alone"]}


@pytest.fixture(scope="session")
def model_cache(model_runs) -> tuple[object, dict]:
    return model_runs["root"], model_runs["summary"]


@pytest.fixture(scope="session")
def torch_answers(model_runs) -> dict:
    return model_runs["batched"]


def _own_keys(summary: dict, workload: str) -> set[str]:
    return {w["key"] for seq in summary["workloads"][workload]["sequences"]
            for per_call in seq["writes"] for w in per_call}


CALLS = [pytest.param(q, i, id=f"{w}-{q}-{i}") for q, (w, calls) in enumerate(QUERIES[:DECIDED])
         for i in range(len(calls))]


_PER_RUN = frozenset({"path", "mtime", "last_used"})
"""What of a command's JSON depends on where and when the files were written, not on the cache."""


def _as_cache(got: object) -> object:
    """A command's JSON without :data:`_PER_RUN`: a blob laid out and its cache dir compare equal."""
    return without_keys(got, _PER_RUN)


@pytest.mark.parametrize("query,index", CALLS)
def test_match_answers_every_lookup_as_torch_does(model_cache, torch_answers, query, index):
    """Each call of each query, on the model cache dir and on the mega-cache blob its build
    saved (``--cache-dir BLOB``): the same answer on both, every lookup torch made on a key
    the cache had answered as torch did."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.models import WORKLOADS

    root, summary = model_cache
    workload, calls = QUERIES[query]
    answer = torch_answers["results"][query]
    assert answer["error"] is None, answer["error"]
    assert not any(answer["writes"][:index]), "an earlier call of this query changed the cache"
    proc = run_fxcache("--cache-dir", str(root), "match", "--json",
                       *WORKLOADS[workload].match_args(calls[index]))
    report = json.loads(proc.stdout)
    assert proc.returncode == report["verdicts"]["exit_code"], proc.stderr  # 0 hit, 1 miss, 3 undecided
    on_blob = run_fxcache("--cache-dir", summary["blob"]["path"], "match", "--json",
                          *WORKLOADS[workload].match_args(calls[index]))
    assert on_blob.returncode == proc.returncode, on_blob.stderr
    assert _as_cache(json.loads(on_blob.stdout)) == _as_cache(report)  # keys, entries, verdicts, hits
    present = {k.key for k in scan_cache(root).keys}
    lookups = answer["lookups"][index]
    compared = assert_match_agrees_with_lookups(report["results"], lookups, present,
                                                _own_keys(summary, workload))
    assert report["unused"] == [], report["unused"]  # every input named was taken by a key
    if any(lk["key"] in present for lk in lookups):
        assert compared
    # Nothing torch never looked up is called a hit of this workload's keys.
    looked_up = {lk["key"] for lk in lookups}
    for r in report["results"]:
        if r["status"] == "hit" and r["kind"] == "aotautograd":
            assert r["key"] in looked_up, r


def test_a_call_after_a_recompile_needs_no_marks_with_after_recompile(model_cache, torch_answers):
    """llama_train's second call changed the length: automatic dynamic recompiled with that
    dim symbolic in ids and labels. Described as it is called (no marks) with
    --after-recompile, match judges the keys as torch traced that call, and agrees with
    torch's lookups; without it, the verdict's first phase (a fresh process) is a new
    graph, as torch's fresh call of another length was."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.models import WORKLOADS

    root, summary = model_cache
    q = next(q for q, (w, calls) in enumerate(QUERIES) if w == "llama_train" and len(calls) == 2)
    workload, calls = QUERIES[q]
    plain = {k: v for k, v in calls[1].items() if k != "dynamic_dims"}
    args = WORKLOADS[workload].match_args(plain)
    proc = run_fxcache("--cache-dir", str(root), "match", "--json", *args, "--after-recompile")
    report = json.loads(proc.stdout)
    # Undecided: the key is torch's if exactly the length changed before the call, which the
    # call does not say; each key's lookup under that premise is torch's (compared below).
    assert proc.returncode == report["verdicts"]["exit_code"] == 3, proc.stderr
    (fv,) = report["verdicts"]["functions"]
    assert fv["phase"] == "after-recompile" and fv["phases"]["first"]["status"] == "new-graph", fv
    assert fv["why_code"] == "dynamic-after-recompile-unknown", fv
    present = {k.key for k in scan_cache(root).keys}
    assert assert_match_agrees_with_lookups(report["results"], torch_answers["results"][q]["lookups"][1],
                                            present, _own_keys(summary, workload))


def test_the_batched_oracle_answers_as_a_fresh_process_does(model_runs, torch_answers):
    """The batched oracle resets Dynamo between queries instead of starting a process per
    query. The query that depends most on process state (a fresh first call under
    automatic dynamic after another query made a dim dynamic in the same process) is
    asked again alone, in a process that never saw another query (forked from the
    oracle process before its first query, after the imports, as the fork server the
    oracle suites use, itself checked against fresh processes in test_fork_server):
    torch's lookups are the same. (Checked once for every query in fresh processes on
    2026-12-01: identical.)"""
    i = _the_alone_query()
    alone = model_runs["alone"]["results"][0]

    def seen(res: dict) -> list:
        return [[(lk["kind"], lk["key"], lk["hit"], lk["status"], lk["mode"]) for lk in call]
                for call in res["lookups"]]

    assert seen(alone) == seen(torch_answers["results"][i])


def test_the_queries_cover_what_the_readme_promises():
    from tests.harness.models import WORKLOADS

    dyn = {WORKLOADS[w].dynamic for w, _ in QUERIES}
    assert {True, None} <= dyn
    assert any(WORKLOADS[w].train for w, _ in QUERIES)
    assert any(len(calls) > 1 for _, calls in QUERIES)  # automatic dynamic's second call


def test_a_module_compiled_whole_binds_keyword_and_positional_inputs_and_says_to_what(model_cache):
    root, _ = model_cache
    gpt2 = run_fxcache("--cache-dir", str(root), "match", "--fn", "GPT2LMHeadModel", "--dynamic",
                       "true", "--shapes", "input_ids=[3,12]")
    assert gpt2.returncode == 0, gpt2.stderr
    assert "input_ids is L['kwargs']['input_ids']" in gpt2.stdout
    assert "HIT" in gpt2.stdout
    for spec in ("[5,3,32,32]:mark_dynamic=[0]", "args[0]=[5,3,32,32]:mark_dynamic=[0]",
                 "pixel_values=[5,3,32,32]:mark_dynamic=[0]"):
        r = run_fxcache("--cache-dir", str(root), "match", "--json", "--fn", "ResNetModel",
                        "--dynamic", "none", "--shapes", spec)
        assert r.returncode == 0, r.stderr
        (hit,) = [x for x in json.loads(r.stdout)["results"] if x["kind"] == "aotautograd"]
        assert hit["status"] == "hit", (spec, hit)


def test_a_forwards_optional_arguments_left_out_are_accounted_or_assumed_and_said(model_cache):
    """Every parameter of the model's forward is accounted for: ResNet's forward (compiled
    itself) reads output_hidden_states and return_dict, None by default, which the cache
    does not record: Dynamo's guards in the build's trace (explained, ``_model_cache``)
    do, and its **kwargs it never names; GPT-2's (a module
    compiled whole through transformers' decorators) takes input_ids, and what the call
    leaves out the build's trace shows left out then too (Dynamo's guards on the kwargs);
    both take **kwargs, none given: the build's trace, explained (``_model_cache``), has
    Dynamo's guards on them, which the call passes. A value given other than the recorded one
    (return_dict=False) leaves the verdict undecided."""
    root, _ = model_cache
    base = ["--cache-dir", str(root), "match", "--fn", "ResNetModel", "--dynamic", "none", "--inputs",
            "[5,3,32,32]:mark_dynamic=[0]"]
    r = run_fxcache(*base, "--json")
    (fv,) = json.loads(r.stdout)["verdicts"]["functions"]
    how = {p["name"]: (p["status"], p["how"]) for p in fv["params"]}
    assert r.returncode == 0 and how == {"pixel_values": ("accounted", "key-input"),
                                         "output_hidden_states": ("accounted", "trace-guard"),
                                         "return_dict": ("accounted", "trace-guard"),
                                         "**kwargs": ("accounted", "unread")}, how
    human = run_fxcache(*base).stdout
    assert "assumed as when the key was compiled" not in human, human
    r = run_fxcache(*base, "--inputs", "return_dict=False", "--json")
    (fv,) = json.loads(r.stdout)["verdicts"]["functions"]
    # the build's trace recorded return_dict=None: another value is another trace, maybe the same graph
    assert r.returncode == 3 and fv["why_code"] == "constant-differs-from-record" and "return_dict=False" in fv["line"], fv
    r = run_fxcache("--cache-dir", str(root), "match", "--json", "--fn", "GPT2LMHeadModel", "--dynamic", "true",
                    "--inputs", "input_ids=[3,12]")
    (fv,) = json.loads(r.stdout)["verdicts"]["functions"]
    how = {p["name"]: p["how"] for p in fv["params"]}
    # What the call leaves out, the build's call left out too: Dynamo's guards on the
    # wrapper's kwargs there (`len(L['kwargs']) == 1` with input_ids' guards, and no
    # positional argument) show no other keyword, so each took its default then as now.
    assert r.returncode == 0 and how["input_ids"] == "key-input", how
    assert how["attention_mask"] == how["use_cache"] == "trace-guard", how
    left_out = next(p for p in fv["params"] if p["name"] == "use_cache")
    assert left_out["status"] == "accounted" and "left out there" in left_out["detail"], left_out
    # Its forward takes **kwargs (output_attentions=True there traces another graph): none
    # given, and Dynamo's guards in the build's trace say none was given then either.
    assert how["**kwargs"] == "trace-guard", how


@pytest.mark.parametrize("query", range(DECIDED, len(QUERIES)))
def test_a_flag_the_build_did_not_give_is_undecided_naming_it_whatever_torch_does(model_cache, torch_answers,
                                                                                  query):
    """GPT-2 called with a flag its build did not give (FLAG_QUERIES), the build's trace
    explained: Dynamo's guards on the wrapper's kwargs (one key, input_ids) fail, and torch
    traces again. return_dict=False traces the build's graph (torch hits its key),
    output_hidden_states=True another (a new key): a flag that differs from the record is
    no NEW GRAPH, and match names it, undecided either way."""
    from tests.harness.models import WORKLOADS

    root, summary = model_cache
    workload, (call,) = QUERIES[query]
    ((flag, value),) = call["flags"].items()
    answer = torch_answers["results"][query]
    assert answer["error"] is None, answer["error"]
    own = _own_keys(summary, workload)
    torch_hit = any(lk["hit"] for lk in answer["lookups"][0] if lk["key"] in own)
    assert torch_hit == (flag == "return_dict"), answer["lookups"][0]
    proc = run_fxcache("--cache-dir", str(root), "match", "--json", *WORKLOADS[workload].match_args(call))
    (fv,) = json.loads(proc.stdout)["verdicts"]["functions"]
    assert proc.returncode == 3 and fv["status"] == "undecided", fv
    assert fv["why_code"] == "kwargs-differs-from-record" and f"{flag}={value}: not given in a traced" in fv["line"], fv
    named = next(p for p in fv["params"] if p["name"] == flag)
    assert (named["status"], named["how"]) == ("undecided", "kwargs-differs-from-record"), named


def test_fn_names_the_compiled_function_and_says_when_no_key_was_compiled_from_it(model_cache):
    root, _ = model_cache
    r = run_fxcache("--cache-dir", str(root), "match", "--fn", "loss_fn", "--shapes", "ids=[2,8]")
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)  # a name no key has: usage error
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert "no key was compiled from a function named 'loss_fn'" in r.stderr, r.stderr
    for held in ("llama_loss (models.py:", "GPT2LMHeadModel.forward", "ResNetModel.forward",
                 "BertModel.forward"):
        assert held in r.stderr, r.stderr
    # The wrapper's keys are found by the wrapper's name, though its graph's ops all
    # sit in the model's frames.
    ok = run_fxcache("--cache-dir", str(root), "match", "--json", "--fn", "llama_loss",
                     "--dynamic", "none", "--shapes", "ids=[2,8]", "--shapes", "labels=[2,8]")
    assert ok.returncode == 0, ok.stderr
    assert [x["status"] for x in json.loads(ok.stdout)["results"] if x["status"] == "hit"]


def test_not_bound_lists_the_call_inputs_not_parameters_and_an_unknown_input_is_a_warning(
        model_cache):
    root, _ = model_cache
    r = run_fxcache("--cache-dir", str(root), "match", "--fn", "GPT2LMHeadModel", "--dynamic",
                    "true", "--shapes", "x=[2,8]")
    assert r.returncode == 3, r.stderr  # undecided: the key's inputs were not given
    assert "NOT BOUND" in r.stdout and "takes input_ids" in r.stdout, r.stdout
    assert "_parameters" not in r.stdout and "L['self']" not in r.stdout, r.stdout
    w = run_fxcache("--cache-dir", str(root), "match", "--fn", "GPT2LMHeadModel", "--dynamic",
                    "true", "--shapes", "input_ids=[3,12]", "--shapes", "mask=[3,12]")
    # mask is no parameter of GPT-2's forward: it would reach its **kwargs, which the build's
    # trace shows held input_ids alone (len(L['kwargs']) == 1): torch traces again.
    assert w.returncode == 3, w.stderr
    assert "warning: no key compiled from GPT2LMHeadModel takes mask" in w.stdout, w.stdout


def test_transformers_decorators_fold_into_the_model_forward_in_ls_and_match(model_cache):
    # GPT-2's and BERT's forward are wrapped by transformers' decorators (`wrapper`,
    # `wrapped_func`, utils/generic.py and deprecation.py): the frame Dynamo compiled.
    root, _ = model_cache
    d = ["--cache-dir", str(root)]
    rows = json.loads(run_fxcache(*d, "ls", "--json").stdout)
    by_fn = {r["function"]: r["compiled_from"] for r in rows}
    assert {"GPT2LMHeadModel.forward", "BertModel.forward", "llama_loss"} <= set(by_fn), by_fn
    assert by_fn["GPT2LMHeadModel.forward"].startswith("GPT2LMHeadModel.forward (modeling_gpt2.py:")
    assert not any(f in ("wrapper", "wrapped_func", "forward") for f in by_fn), by_fn
    groups = json.loads(run_fxcache(*d, "ls", "--by", "function", "--json").stdout)
    assert {g["function"]: g["compiled_from"] for g in groups} == by_fn
    r = run_fxcache(*d, "match", "--json", "--fn", "wrapped_func", "--shapes", "input_ids=[3,12]")
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)  # a wrapper two models share
    assert "'wrapped_func' names 2 functions" in r.stderr, r.stderr
    assert by_fn["GPT2LMHeadModel.forward"] in r.stderr and by_fn["BertModel.forward"] in r.stderr
    ok = run_fxcache(*d, "match", "--json", "--fn", by_fn["GPT2LMHeadModel.forward"], "--dynamic", "true",
                     "--shapes", "input_ids=[3,12]")
    assert ok.returncode == 0, ok.stderr
    v = json.loads(ok.stdout)
    assert [f["function"] for f in v["verdicts"]["functions"]] == ["GPT2LMHeadModel.forward"]
    assert {x["compiled_from"] for x in v["results"]} == {by_fn["GPT2LMHeadModel.forward"]}


def test_the_code_scan_finds_nothing_foreign_in_the_models_cache(model_cache):
    """Every global the models' entries name is one torch writes (in process: no run)."""
    from fxcache_core.cache.scan import scan_cache
    from fxcache_core.catalog.reader import Catalog
    from fxcache_core.decode.entries import DecodedEntry

    root, _ = model_cache
    cat = Catalog(scan_cache(root))
    decoded = [cat.load(e) for e in cat.scan.entries()]
    assert len(decoded) >= 10 and all(isinstance(d, DecodedEntry) for d in decoded), decoded
    assert [d.foreign for d in decoded if d.foreign] == []


def test_a_bool_mask_on_the_int64_mask_key_is_a_new_graph_as_torch_says(model_cache, torch_answers):
    """BERT's key takes attention_mask as int64 (as a tokenizer gives it). Called with a
    bool mask, torch guards the dtype and traces another graph (its lookups are of keys
    the cache does not have); match says NEW GRAPH, naming the input and both dtypes.
    Without a dtype, the key's int64 is assumed, and said."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.models import WORKLOADS
    from tests.helpers import torch_status

    root, _ = model_cache
    call = {"batch": 2, "seq": 10, "mask": "bool"}
    answer = torch_answers["results"][QUERIES.index(("bert_mask", [call]))]
    assert answer["error"] is None, answer["error"]
    present = {k.key for k in scan_cache(root).keys}
    assert torch_status(answer["lookups"][0], present) == "new-graph", answer["lookups"]
    w = WORKLOADS["bert_mask"]
    rep = json.loads(run_fxcache("--cache-dir", str(root), "match", "--json", *w.match_args(call)).stdout)
    v = next(f for f in rep["verdicts"]["functions"] if f["function"].startswith("BertModel"))
    assert rep["verdicts"]["exit_code"] == 1
    assert v["status"] == "new-graph" and v["why_code"] == "dtype-differs", v
    assert "attention_mask'] is int64" in v["why"] and "given bool" in v["why"], v["why"]
    plain = {k: call[k] for k in ("batch", "seq")}
    rep = json.loads(run_fxcache("--cache-dir", str(root), "match", "--json", *w.match_args(plain)).stdout)
    v = next(f for f in rep["verdicts"]["functions"] if f["function"].startswith("BertModel"))
    assert v["status"] == "hit" and any("attention_mask'] int64" in a for a in v["assumed"]), v


def test_an_optional_tensor_given_against_a_key_is_undecided_and_left_out_is_none(model_cache):
    """An optional input (``attention_mask=None`` by default) changes the graph whether it is
    given or left out. GPT-2's key was compiled without a mask: a call that passes one is
    undecided (the cache does not record it; torch traces another graph when the code reads
    it, as GPT-2's forward does). BERT's key takes the mask: a call that leaves it out passes
    None, its default, which that key cannot take (torch traces another graph). A parameter
    the function's source never reads (unused_arg's ``unused``,
    tests/torch/test_oracle_suite.py) changes nothing and says nothing."""
    root, _ = model_cache
    r = run_fxcache("--cache-dir", str(root), "match", "--json", "--fn", "GPT2LMHeadModel", "--dynamic",
                    "true", "--shapes", "input_ids=[3,12]", "--shapes", "attention_mask=[3,12]:dtype=int64")
    assert r.returncode == 3, r.stdout
    (fn,) = json.loads(r.stdout)["verdicts"]["functions"]
    assert fn["status"] == "undecided" and fn["why_code"] == "tensor-not-input", fn
    r = run_fxcache("--cache-dir", str(root), "match", "--json", "--fn", "BertModel", "--dynamic", "none",
                    "--shapes", "input_ids=[2,12]:mark_dynamic=[1]")
    assert r.returncode == 1, r.stdout
    (fn,) = json.loads(r.stdout)["verdicts"]["functions"]
    assert fn["status"] == "new-graph" and fn["why_code"] == "none-for-input", fn
    assert "attention_mask is left out (None, its default)" in fn["line"], fn


def test_the_recorded_answers_stand_for_torchs_on_this_sessions_model_cache(model_cache):
    """The answers the other tests compare with were recorded by this torch and
    transformers, for these queries, on a model cache built as this session's was."""
    from tests.harness import recorded_models

    _, summary = model_cache
    assert recorded_models.check(summary, [[w, calls] for w, calls in QUERIES], _the_alone_query()) is None


def test_the_blob_saved_after_the_model_build_lists_as_the_cache_dir(model_cache):
    """The model build's process saved ``save_cache_artifacts()`` at its end (transformers
    models, a Llama training step): given as ``--cache-dir``, it lists the same keys,
    entries and functions as the cache dir (test_match_answers_every_lookup_as_torch_does
    matches every query's calls on both)."""
    root, summary = model_cache
    blob = summary["blob"]
    on_dir, on_blob = (json.loads(run_fxcache("--cache-dir", str(where), "ls", "--entries", "--json").stdout)
                       for where in (root, blob["path"]))
    assert _as_cache(on_blob) == _as_cache(on_dir)
    assert {k["kind"] for k in on_dir} == {"fxgraph", "aotautograd"}
    for kind, artifact in (("fxgraph", "inductor"), ("aotautograd", "aot_autograd")):
        assert sum(len(k["entries"]) for k in on_dir if k["kind"] == kind) == blob["artifacts"][artifact]
