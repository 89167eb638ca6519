import torch
from torch import nn

from gdcourse.data import load_digits_split
from gdcourse.models import mlp
from gdcourse.preflight import CHECKS, preflight


def _loader(X, y, **kw):
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.as_tensor(X), torch.as_tensor(y)),
                                       batch_size=64, **kw)


def _healthy():
    torch.manual_seed(0)
    split = load_digits_split(0.2, n_samples=600)
    model = mlp(64, 32, 10, dropout=0.1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda t: min(1.0, (t + 1) / 10))
    return split, model, opt, sched


def test_a_healthy_setup_passes_every_check_and_nothing_changes(capsys):
    split, model, opt, sched = _healthy()
    before = [p.clone() for p in model.parameters()]
    torch.manual_seed(5)
    expected_draw = torch.rand(3)
    torch.manual_seed(5)
    report = preflight(model, _loader(split.X_train, split.y_train, shuffle=True), opt,
                       nn.functional.cross_entropy, scheduler=sched, warmup_steps=9)
    assert report.ok and [c.name for c in report.checks] == list(CHECKS)
    assert "all checks passed" in capsys.readouterr().out
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert opt.state == {} or all(not s for s in opt.state.values())
    assert sched.last_epoch == 0 and opt.param_groups[0]["lr"] == sched.get_last_lr()[0]
    assert torch.equal(torch.rand(3), expected_draw)  # the caller's random stream is untouched


def test_each_classic_mistake_fails_its_own_check():
    split, model, opt, sched = _healthy()
    raw = preflight(model, _loader(split.X_train * 16 + 8, split.y_train), opt, nn.functional.cross_entropy,
                    verbose=False)
    assert "inputs normalised" in raw.failed()

    torch.manual_seed(0)
    m = mlp(64, 32, 10)
    head_missing = torch.optim.SGD(m[0].parameters(), lr=0.1)
    r = preflight(m, _loader(split.X_train, split.y_train), head_missing, nn.functional.cross_entropy,
                  frozen=("0.",), verbose=False)
    assert {"optimizer covers them", "trainable parameters"} <= set(r.failed())

    zero_start = torch.optim.lr_scheduler.LambdaLR(opt, lambda t: t / 10)  # never capped
    r = preflight(model, _loader(split.X_train, split.y_train), opt, nn.functional.cross_entropy,
                  scheduler=zero_start, warmup_steps=10, verbose=False)
    assert r.failed() == ["learning rate in effect"] and "lr 0 " in r["learning rate in effect"].detail

    fresh = torch.optim.SGD(model.parameters(), lr=0.1)
    per_batch = torch.optim.lr_scheduler.ExponentialLR(fresh, gamma=0.8)  # meant per epoch, stepped per batch
    r = preflight(model, _loader(split.X_train, split.y_train), fresh, nn.functional.cross_entropy,
                  scheduler=per_batch, verbose=False)
    assert r.failed() == ["learning rate in effect"] and "per batch" in r["learning rate in effect"].detail
    # the same scheduler stepped once per epoch, as it was meant, passes when preflight is told so
    r = preflight(model, _loader(split.X_train, split.y_train), fresh, nn.functional.cross_entropy,
                  scheduler=per_batch, scheduler_every=100, verbose=False)
    assert r.ok, r

    tiny = torch.optim.SGD(model.parameters(), lr=1e-6)
    r = preflight(model, _loader(split.X_train, split.y_train), tiny, nn.functional.cross_entropy, verbose=False)
    assert r.failed() == ["overfits one batch"]


def test_non_finite_loss_and_dead_branch():
    split, model, opt, _ = _healthy()
    with torch.no_grad():
        model[0].weight[0, 0] = float("nan")
    r = preflight(model, _loader(split.X_train, split.y_train), opt, nn.functional.cross_entropy, verbose=False)
    assert {"finite loss on one batch", "overfits one batch"} <= set(r.failed())

    class Frozen(nn.Module):  # a branch evaluated under no_grad never learns
        def __init__(self):
            super().__init__()
            self.body, self.head = nn.Linear(64, 16), nn.Linear(16, 10)

        def forward(self, x):
            with torch.no_grad():
                h = self.body(x)
            return self.head(torch.relu(h))

    torch.manual_seed(0)
    m = Frozen()
    r = preflight(m, _loader(split.X_train, split.y_train), torch.optim.Adam(m.parameters(), lr=1e-2),
                  nn.functional.cross_entropy, verbose=False)
    assert "every trainable parameter gets a gradient" in r.failed()
    assert "body.weight" in r["every trainable parameter gets a gradient"].detail


def test_regression_targets_on_a_huge_scale_are_flagged():
    torch.manual_seed(0)
    X = torch.randn(128, 4)
    y = (X @ torch.randn(4, 1)) * 1e4 + 3e5  # prices in currency units
    model = nn.Linear(4, 1)
    r = preflight(model, _loader(X, y), torch.optim.SGD(model.parameters(), lr=1e-2), nn.functional.mse_loss,
                  verbose=False)
    assert "targets on a sane scale" in r.failed()
