"""The plain torch functions of the evaluation families on data-dependent jumps and aliased
inputs (plain tensor code: torch comes with the tensors).

A jump on a tensor's value breaks the graph, and Dynamo resumes in one of two frames of one
name, one per side: a test on the input itself (so that the frame resumed takes the call's
own tensor), under each mode; both sides making the same ops; a ``while`` and a ``for`` on the
data. Then one tensor passed for two parameters (Dynamo takes it as one graph input, guarded
by ``L['a'] is L['b']``). :mod:`tests.harness.evaluation.families_r14fg` says how each is
compiled and called.
"""


def branch_on_input(x):
    # The test is on the input: the frame resumed after it takes x itself.
    if x.sum() > 0:
        z = x.cos()
    else:
        z = x.exp()
    return z * 2


def same_sides(x):
    # Both sides make the same ops.
    if x.max() > 0:
        z = x * 2
    else:
        z = x * 2
    return z.sin()


def while_data(x):
    # A loop on the data.
    y = x.sin()
    while y.sum() > 0:
        y = y - 1
    return y.cos()


def for_data(x):
    # A test on the data inside a loop.
    for i in range(2):
        if x[i].sum() > 0:
            x = x.cos()
    return x * 2


def two_inputs(a, b):
    # Called with one tensor for both, or with two.
    return a.sin() + b.cos()


def three_inputs(a, b, c):
    # Two of three may be one tensor.
    return a.sin() + b.cos() * c

