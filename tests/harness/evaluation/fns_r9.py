"""The plain torch functions of the ninth round of evaluation families (imports torch).

Call patterns the earlier rounds do not use: a training step (``loss.backward()`` and an
optimizer step inside the compiled function), ``F.scaled_dot_product_attention`` with an
``is_causal`` flag and an optional mask, ``torch.cat`` of a list whose length varies under
``dynamic=True``, ``x.view(-1, n)`` with an int argument, ``x.size(1) // 2``, a branch on
``x.dim()``, ``F.interpolate`` with a float ``scale_factor`` and a str mode, an einsum
with an ellipsis and a ``None`` default resolved in the body, and a nested module whose
submodules read ``self.training``. :mod:`tests.harness.evaluation.families_r9` says how
each is compiled and called.
"""

import torch
import torch.nn.functional as F

torch.manual_seed(0)
_NET = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
_OPT = torch.optim.SGD(_NET.parameters(), lr=0.01)


def train_step(x, y):
    # A user's training step compiled whole: forward, loss, backward, optimizer step.
    _OPT.zero_grad()
    loss = F.mse_loss(_NET(x), y)
    loss.backward()
    _OPT.step()
    return loss.detach()


def attend(q, k, v, is_causal=False, mask=None):
    # scaled_dot_product_attention with a bool flag and an optional mask.
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=is_causal)


def cat_cols(xs):
    # torch.cat of a list whose length the call picks, then a reduction.
    return torch.cat(xs, dim=1).relu().sum(1)


def view_cols(x, n):
    # x.view(-1, n) with an int argument.
    return x.view(-1, n).softmax(-1)


def half_narrow(x):
    # x.size(1) // 2: the first half of the columns against the rest.
    h = x.size(1) // 2
    return x[:, :h].mean(1) * x[:, h:].amax(1)


def rank_branch(x):
    # A branch on the input's rank, as code that takes batched and unbatched inputs does.
    if x.dim() == 3:
        x = x.flatten(0, 1)
    return x.tanh() @ x.t()


def rescale(x, scale_factor=1.5, mode="bilinear", align_corners=None):
    # F.interpolate with a float scale factor, a str mode and a None default.
    return F.interpolate(x, scale_factor=scale_factor, mode=mode, align_corners=align_corners)


def scores(q, k, scale=None):
    # An einsum with an ellipsis over leading dims; the scale defaults from a size.
    if scale is None:
        scale = q.shape[-1] ** -0.5
    return torch.einsum("...qd,...kd->...qk", q, k) * scale


def fixed_mlp(x):
    # A plain function compiled with dynamic=False, then called with other sizes.
    return (x.sin() * 2).cumsum(-1)


class _Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
        self.bn = torch.nn.BatchNorm1d(8)
        self.drop = torch.nn.Dropout(0.0)

    def forward(self, x):
        h = self.bn(self.lin(x))
        if self.training:
            h = h * 0.5
        return self.drop(h.relu())


class Nested(torch.nn.Module):
    """Two nested blocks: BatchNorm, Dropout and a ``self.training`` branch inside each."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList([_Block(), _Block()])

    def forward(self, x):
        for b in self.blocks:
            x = b(x) + x
        return x


def nested() -> torch.nn.Module:
    torch.manual_seed(0)
    return Nested().eval()


def masked_attend(q, k, v, mask=None, dropout_p=0.0):
    # scaled_dot_product_attention with an optional mask and a float dropout left at 0.
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)


def upsample_twice(x, mode="nearest"):
    # A size computed from the input's own sizes, a str mode.
    return F.interpolate(x, size=(x.shape[-2] * 2, x.shape[-1] * 2), mode=mode)


def heads_view(x, heads):
    # Split the last dim into heads with an int argument: view(b, s, heads, -1).
    b, s, _ = x.shape
    return x.view(b, s, heads, -1).transpose(1, 2).softmax(-1)
