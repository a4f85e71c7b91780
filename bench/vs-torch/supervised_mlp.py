"""The PyTorch CPU reference of `npm run bench -- vs-torch-supervised`: minibatch training of an MLP classifier.

Plain PyTorch, the loop a practitioner writes: an `nn.Sequential` MLP (PyTorch's default initialisation),
Adam, cross-entropy, the inputs standardised once with the training rows' mean and std, and each epoch a
fresh permutation of the training rows cut into full minibatches gathered by tensor indexing (no
DataLoader, which is slower). It stops, like the engine, before a minibatch would pass the example
budget; the validation rows are evaluated (loss and accuracy) after every complete epoch and at the end.

The bench writes one JSON file (`--data`) with the matrix, the labels, the training and validation rows
(the engine's own split) and the settings; for the categorical case it also holds the raw table, which
this script encodes itself with NumPy by the engine's default decisions (median fill with a "was missing"
indicator and standardisation for numeric columns; one-hot of the maxLevels - 1 most frequent levels, one
input for the rest, and an indicator for categorical ones) and compares with the engine's matrix. It
trains on the bench's matrix, so both sides see the same inputs.

Prints one line `SUMMARY {json}`: `train_wall_s` (standardisation, model, training loop and validations) and
`train_cpu_s` (the process's CPU seconds over the same span), `examples`, `epochs`, `val_loss`, `val_accuracy`, and for the categorical case `encode_s` and
`encode_max_abs_diff` (largest difference from the engine's encoding).

    python supervised_mlp.py --data FILE --seed 1 --threads 1
"""

import argparse
import json
import time

import numpy as np
import torch
from torch import nn

MISSING = "(missing)"


def encode(raw: list[dict], train: np.ndarray, max_levels: int) -> np.ndarray:
    """The raw columns as features, fitted on the training rows (the engine's default column decisions)."""
    parts = []
    for col in raw:
        if col["kind"] == "numeric":
            v = np.array([np.nan if c is None else c for c in col["values"]], dtype=np.float64)
            miss = np.isnan(v)
            fill = np.median(v[train][~miss[train]])
            filled = np.where(miss, fill, v)
            center, sd = filled[train].mean(), filled[train].std()
            parts.append(((filled - center) / (sd if sd > 1e-12 else 1.0))[:, None])
        else:
            levels = np.array([MISSING if c is None else c for c in col["values"]], dtype=object)
            miss = levels == MISSING
            names, counts = np.unique(levels[train], return_counts=True)
            ranked = [n for _, n in sorted(zip(-counts, names))]
            keep = ranked[: max_levels - 1] if len(ranked) > max_levels else ranked
            hot = np.stack([levels == lv for lv in keep], axis=1).astype(np.float64)
            parts.append(hot)
            if len(ranked) > max_levels:
                parts.append((~np.isin(levels, keep)).astype(np.float64)[:, None])
        if miss[train].any():
            parts.append(miss.astype(np.float64)[:, None])
    return np.concatenate(parts, axis=1)


def mlp(d: int, hidden: list[int], k: int, activation: str) -> nn.Sequential:
    layers: list[nn.Module] = []
    for h in hidden:
        layers += [nn.Linear(d, h), nn.ReLU() if activation == "relu" else nn.Tanh()]
        d = h
    return nn.Sequential(*layers, nn.Linear(d, k))


def train(job: dict, seed: int) -> dict:
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    x_all = np.asarray(job["x"], dtype=np.float64)
    y_all = torch.tensor(job["y"], dtype=torch.long)
    tr, va = np.asarray(job["train"]), np.asarray(job["val"])
    batch, budget, epochs = job["batch"], job["examples"], job["epochs"]
    start, cpu0 = time.perf_counter(), time.process_time()
    mean, std = x_all[tr].mean(0), x_all[tr].std(0)
    std[std == 0] = 1.0
    x = torch.from_numpy(((x_all - mean) / std).astype(np.float32))
    x_tr, y_tr, x_va, y_va = x[tr], y_all[tr], x[va], y_all[va]
    model = mlp(x.shape[1], job["hidden"], job["classes"], job["activation"])
    opt = torch.optim.Adam(model.parameters(), lr=job["lr"])
    loss_fn = nn.CrossEntropyLoss()
    examples, done, val = 0, 0, (float("nan"), float("nan"))

    def validate() -> tuple[float, float]:
        with torch.no_grad():
            out = model(x_va)
            return loss_fn(out, y_va).item(), (out.argmax(1) == y_va).float().mean().item()

    for _ in range(epochs):
        order = torch.from_numpy(rng.permutation(len(tr)))
        total, steps, stopped = 0.0, 0, False
        for s in range(0, len(tr) - batch + 1, batch):
            if examples + batch > budget:
                stopped = True
                break
            idx = order[s : s + batch]
            loss = loss_fn(model(x_tr[idx]), y_tr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            steps += 1
            examples += batch
        if stopped:
            break
        done += 1
        if len(va):
            val = validate()
    if len(va):
        val = validate()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
    return {
        "seed": seed,
        "threads": torch.get_num_threads(),
        "torch_version": torch.__version__,
        "train_wall_s": wall,
        "train_cpu_s": cpu,
        "examples": examples,
        "epochs": done,
        "val_loss": val[0],
        "val_accuracy": val[1],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", required=True, help="the bench's JSON file")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    with open(args.data) as f:
        job = json.load(f)
    extra = {}
    if job.get("raw"):
        t0 = time.perf_counter()
        enc = encode(job["raw"], np.asarray(job["train"]), job["maxLevels"])
        extra["encode_s"] = time.perf_counter() - t0
        ref = np.asarray(job["x"], dtype=np.float64)
        extra["encode_max_abs_diff"] = float(np.abs(enc - ref).max()) if enc.shape == ref.shape else float("inf")
    summary = {**train(job, args.seed), **extra}
    print("SUMMARY " + json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
