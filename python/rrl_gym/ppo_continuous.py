"""PPO for continuous control in PyTorch, CleanRL style, as a recursive-rl command trainer.

Run by the harness as ``python python/rrl_gym/ppo_continuous.py SPEC_PATH JOB_DIR`` (a task whose
brief names it as ``trainer``; see docs). It reads the validated job spec and ``brief.json`` from
the job directory, trains on the brief's Gymnasium environment (``environment.gymnasium``) and
writes what every trainer writes: ``policy.json`` (the actor's mean network in the harness's
``rrl-mlp-policy/1`` format, with the observation normaliser frozen, so the harness scores it
with its own held-out seeds), ``curve.jsonl``, ``cost.json`` and ``status.json``.

From the spec it uses: ``environment.numEnvs`` and ``wrappers`` (``normalize-observation``),
``model.hidden`` and ``activation``, every PPO hyperparameter (``learningRate``, ``annealLr``,
``gamma``, ``gaeLambda``, ``clip``, ``epochs``, ``minibatches``, ``rolloutSteps``,
``entropyCoef``, ``valueCoef``, ``maxGradNorm``, ``normalizeAdvantages``, ``initLogStd``),
``budget.envSteps`` (capped by the brief; never passed), ``budget.targetReturn`` and ``seed``.
It ignores ``reward.expression`` (it trains on the environment reward, scaled by a running
estimate of the return's standard deviation and clipped at ±10, as CleanRL does).

Self-contained on purpose (one readable file; only gymnasium, numpy and torch): a GPU user
copies it, sets ``RRL_TORCH_DEVICE=cuda`` and swaps in a larger network. ``RRL_TORCH_THREADS``
(default 1) sets torch's CPU threads.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
import torch
from torch import nn
from torch.distributions.normal import Normal

F64 = npt.NDArray[np.float64]


class RunningMeanStd:
    """Running mean and variance of batches (parallel-variance update, as Gymnasium's wrappers)."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.mean = np.zeros(shape)
        self.var = np.ones(shape)
        self.count = 1e-4

    def update(self, x: F64) -> None:
        """Folds a batch (rows along axis 0) into the statistics."""
        b_mean, b_var, b_count = x.mean(axis=0), x.var(axis=0), x.shape[0]
        delta = b_mean - self.mean
        total = self.count + b_count
        self.mean = self.mean + delta * b_count / total
        m2 = self.var * self.count + b_var * b_count + delta**2 * self.count * b_count / total
        self.var = m2 / total
        self.count = total


def layer(n_in: int, n_out: int, std: float = math.sqrt(2)) -> nn.Linear:
    """A linear layer with orthogonal weights and zero bias (CleanRL's ``layer_init``)."""
    lin = nn.Linear(n_in, n_out)
    nn.init.orthogonal_(lin.weight, std)
    nn.init.constant_(lin.bias, 0.0)
    return lin


def mlp(sizes: list[int], activation: str, last_std: float) -> nn.Sequential:
    """Linear layers of ``sizes`` with ``activation`` between them; the last one initialised with ``last_std``."""
    act: type[nn.Module] = nn.Tanh if activation == "tanh" else nn.ReLU
    mods: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        last = i == len(sizes) - 2
        mods.append(layer(sizes[i], sizes[i + 1], last_std if last else math.sqrt(2)))
        if not last:
            mods.append(act())
    return nn.Sequential(*mods)


class Agent(nn.Module):
    """Gaussian actor with a state-independent log std, and a separate critic."""

    def __init__(self, obs_dim: int, act_dim: int, hidden: list[int], activation: str, init_log_std: float) -> None:
        super().__init__()
        self.critic = mlp([obs_dim, *hidden, 1], activation, 1.0)
        self.actor_mean = mlp([obs_dim, *hidden, act_dim], activation, 0.01)
        self.actor_logstd = nn.Parameter(torch.full((1, act_dim), float(init_log_std)))

    def value(self, x: torch.Tensor) -> torch.Tensor:
        """The critic's estimate, one per row."""
        v: torch.Tensor = self.critic(x)
        return v.squeeze(-1)

    def act(self, x: torch.Tensor, action: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """A sampled (or given) action, its log-probability, the policy's entropy and the value."""
        mean = self.actor_mean(x)
        dist = Normal(mean, self.actor_logstd.expand_as(mean).exp())
        if action is None:
            action = dist.sample()  # type: ignore[no-untyped-call]
        logp: torch.Tensor = dist.log_prob(action)  # type: ignore[no-untyped-call]
        entropy: torch.Tensor = dist.entropy()  # type: ignore[no-untyped-call]
        return action, logp.sum(-1), entropy.sum(-1), self.value(x)


def policy_file(agent: Agent, obs_dim: int, low: list[float], high: list[float], activation: str, norm: RunningMeanStd | None) -> dict[str, Any]:
    """The actor's mean network as ``rrl-mlp-policy/1`` (weights row-major [in][out])."""
    layers = []
    for m in agent.actor_mean:
        if isinstance(m, nn.Linear):
            w = m.weight.detach().cpu().double().numpy()  # [out][in]
            layers.append(
                {"in": int(w.shape[1]), "out": int(w.shape[0]), "weights": w.T.reshape(-1).tolist(), "bias": m.bias.detach().cpu().double().numpy().tolist()}
            )
    obs_norm = None if norm is None else {"mean": norm.mean.tolist(), "std": np.sqrt(norm.var + 1e-8).tolist(), "clip": 10.0}
    return {
        "format": "rrl-mlp-policy/1",
        "obsDim": obs_dim,
        "actionSpace": {"type": "box", "low": low, "high": high},
        "activation": activation,
        "layers": layers,
        "obsNorm": obs_norm,
    }


def train(spec: dict[str, Any], brief: dict[str, Any], out: Path) -> dict[str, Any]:
    """Trains one job; writes policy.json and curve.jsonl into ``out``; returns the status and cost."""
    t0, cpu0 = time.perf_counter(), time.process_time()
    g = brief["environment"].get("gymnasium")
    if not g:
        raise ValueError("brief.environment.gymnasium: this trainer needs a Gymnasium environment")
    if ":" in g["id"] and g.get("allowImport") is not True:  # gym.make would import the module the id names
        raise ValueError(f'brief.environment.gymnasium.id: "{g["id"][:80]}" names a module to import; the task must allow it (allowImport)')
    if g["actionSpace"]["type"] != "box":
        raise ValueError("brief.environment.gymnasium.actionSpace: this trainer needs continuous (box) actions")
    a = spec["algorithm"]
    if a["name"] != "ppo":
        raise ValueError(f'algorithm.name: this trainer runs "ppo", not "{a["name"]}"')
    torch.set_num_threads(int(os.environ.get("RRL_TORCH_THREADS", "1")))
    device = torch.device(os.environ.get("RRL_TORCH_DEVICE", "cpu"))
    seed = int(spec["seed"])
    np.random.seed(seed)
    torch.manual_seed(seed)

    num_envs = int(spec["environment"]["numEnvs"])
    cap = min(int(spec["budget"]["envSteps"]), int(brief["budget"]["maxEnvSteps"]))
    num_steps = max(1, min(int(a["rolloutSteps"]), cap // num_envs))
    batch = num_envs * num_steps
    updates = cap // batch
    if updates < 1:
        raise ValueError(f"budget.envSteps ({cap}) is smaller than environment.numEnvs ({num_envs})")
    minibatch = max(1, batch // int(a["minibatches"]))
    normalize = "normalize-observation" in spec["environment"]["wrappers"]
    gamma = float(a["gamma"])

    envs = gym.vector.SyncVectorEnv(
        [lambda: gym.make(g["id"], **g["kwargs"]) for _ in range(num_envs)],
        autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,
    )
    obs_dim = int(g["obsDim"])
    shape = envs.single_observation_space.shape or ()
    if int(np.prod(shape)) != obs_dim:
        raise ValueError(f"brief.environment.gymnasium.obsDim: {g['id']} observes {int(np.prod(shape))} values, the task declares {obs_dim}")
    low, high = [float(v) for v in g["actionSpace"]["low"]], [float(v) for v in g["actionSpace"]["high"]]
    act_dim = len(low)
    hidden = [int(h) for h in spec["model"]["hidden"]]
    activation = str(spec["model"]["activation"])
    agent = Agent(obs_dim, act_dim, hidden, activation, float(a.get("initLogStd", 0.0))).to(device)
    lr0 = float(a["learningRate"])
    opt = torch.optim.Adam(agent.parameters(), lr=lr0, eps=1e-5)

    obs_rms = RunningMeanStd((obs_dim,)) if normalize else None
    ret_rms = RunningMeanStd(())
    disc_ret = np.zeros(num_envs)

    def prepare(raw: F64, fold: bool) -> torch.Tensor:
        x = raw.reshape(num_envs, obs_dim).astype(np.float64)
        if obs_rms is not None:
            if fold:
                obs_rms.update(x)
            x = np.clip((x - obs_rms.mean) / np.sqrt(obs_rms.var + 1e-8), -10, 10)
        return torch.as_tensor(x, dtype=torch.float32, device=device)

    b_obs = torch.zeros((num_steps, num_envs, obs_dim), device=device)
    b_act = torch.zeros((num_steps, num_envs, act_dim), device=device)
    b_logp = torch.zeros((num_steps, num_envs), device=device)
    b_rew = torch.zeros((num_steps, num_envs), device=device)
    b_done = torch.zeros((num_steps, num_envs), device=device)
    b_val = torch.zeros((num_steps, num_envs), device=device)

    curve = open(out / "curve.jsonl", "w")  # noqa: SIM115  (written through the whole run, closed at its end)

    def log(name: str, step: int, value: float) -> None:
        curve.write(json.dumps({"name": name, "step": step, "wallTime": time.perf_counter() - t0, "value": float(value)}) + "\n")

    raw_obs: F64
    reward: F64
    term: npt.NDArray[np.bool_]
    trunc: npt.NDArray[np.bool_]
    raw_obs, _ = envs.reset(seed=[(seed + i) % 2**31 for i in range(num_envs)])
    next_obs = prepare(raw_obs, True)
    next_done = torch.zeros(num_envs, device=device)
    ep_ret, ep_len = np.zeros(num_envs), np.zeros(num_envs, dtype=np.int64)
    recent: list[float] = []
    env_steps, done_updates, stop = 0, 0, "budget"
    target = spec["budget"].get("targetReturn")
    low_np, high_np = np.array(low), np.array(high)

    for update in range(updates):
        if a.get("annealLr", True):
            for group in opt.param_groups:
                group["lr"] = lr0 * (1.0 - update / updates)
        for step in range(num_steps):
            b_obs[step], b_done[step] = next_obs, next_done
            with torch.no_grad():
                action, logp, _, value = agent.act(next_obs)
            b_act[step], b_logp[step], b_val[step] = action, logp, value
            env_action = np.clip(action.cpu().numpy().astype(np.float64), low_np, high_np)
            raw_obs, reward, term, trunc, _ = envs.step(env_action)
            env_steps += num_envs
            done = np.logical_or(term, trunc)
            disc_ret = disc_ret * gamma + reward
            ret_rms.update(disc_ret)
            disc_ret[done] = 0.0
            scaled = np.clip(reward / np.sqrt(ret_rms.var + 1e-8), -10, 10)
            b_rew[step] = torch.as_tensor(scaled, dtype=torch.float32, device=device)
            ep_ret += reward
            ep_len += 1
            for i in np.flatnonzero(done):
                log("charts/episodic_return", env_steps, ep_ret[i])
                log("charts/episodic_length", env_steps, ep_len[i])
                recent = (recent + [float(ep_ret[i])])[-20:]
                ep_ret[i], ep_len[i] = 0.0, 0
            next_obs = prepare(raw_obs, True)
            next_done = torch.as_tensor(done, dtype=torch.float32, device=device)

        # Generalised advantage estimation (time-limit cuts end the episode, as CleanRL does).
        with torch.no_grad():
            next_value = agent.value(next_obs)
            adv = torch.zeros_like(b_rew)
            last = torch.zeros(num_envs, device=device)
            for t in reversed(range(num_steps)):
                not_done = 1.0 - (next_done if t == num_steps - 1 else b_done[t + 1])
                nv = next_value if t == num_steps - 1 else b_val[t + 1]
                delta = b_rew[t] + gamma * nv * not_done - b_val[t]
                last = delta + gamma * float(a["gaeLambda"]) * not_done * last
                adv[t] = last
            ret = adv + b_val

        f_obs, f_act, f_logp = b_obs.reshape(-1, obs_dim), b_act.reshape(-1, act_dim), b_logp.reshape(-1)
        f_adv, f_ret, f_val = adv.reshape(-1), ret.reshape(-1), b_val.reshape(-1)
        clip = float(a["clip"])
        for _epoch in range(int(a["epochs"])):
            order = torch.randperm(batch, device=device)
            for start in range(0, batch, minibatch):
                mb = order[start : start + minibatch]
                _, new_logp, entropy, new_val = agent.act(f_obs[mb], f_act[mb])
                ratio = (new_logp - f_logp[mb]).exp()
                mb_adv = f_adv[mb]
                if a.get("normalizeAdvantages", True) and len(mb) > 1:
                    mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg_loss = torch.max(-mb_adv * ratio, -mb_adv * torch.clamp(ratio, 1 - clip, 1 + clip)).mean()
                v_clipped = f_val[mb] + torch.clamp(new_val - f_val[mb], -clip, clip)
                v_loss = 0.5 * torch.max((new_val - f_ret[mb]) ** 2, (v_clipped - f_ret[mb]) ** 2).mean()
                ent = entropy.mean()
                loss = pg_loss - float(a["entropyCoef"]) * ent + float(a.get("valueCoef", 0.5)) * v_loss
                if not torch.isfinite(loss):
                    raise FloatingPointError(f"the loss became {loss.item()} at env step {env_steps}")
                opt.zero_grad()
                loss.backward()  # type: ignore[no-untyped-call]
                nn.utils.clip_grad_norm_(agent.parameters(), float(a.get("maxGradNorm", 0.5)))
                opt.step()
        done_updates += 1
        log("losses/policy_loss", env_steps, pg_loss.item())
        log("losses/value_loss", env_steps, v_loss.item())
        log("losses/entropy", env_steps, ent.item())
        if target is not None and len(recent) >= 20 and float(np.mean(recent)) >= float(target):
            stop = "target-return"
            break

    curve.close()
    envs.close()
    (out / "policy.json").write_text(json.dumps(policy_file(agent, obs_dim, low, high, activation, obs_rms)))
    cost = {"envSteps": env_steps, "examples": 0, "wallSeconds": time.perf_counter() - t0, "cpuSeconds": time.process_time() - cpu0}
    status = {
        "status": "succeeded",
        "stopReason": stop,
        "updates": done_updates,
        "trainReturn": float(np.mean(recent)) if recent else None,
        "backend": f"torch-{torch.__version__}-{device.type}",
    }
    return {"status": status, "cost": cost}


def main(argv: list[str]) -> int:
    """``SPEC_PATH JOB_DIR``: trains and writes the artifact; a failure is status.json with one line."""
    if len(argv) != 2:
        sys.stderr.write("usage: ppo_continuous.py SPEC_PATH JOB_DIR\n")
        return 2
    out = Path(argv[1])
    try:
        spec = json.loads(Path(argv[0]).read_text())
        brief = json.loads((out / "brief.json").read_text())
        r = train(spec, brief, out)
    except Exception as err:  # noqa: BLE001  (any failure is one line for the harness, never a stack trace)
        line = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"[:400]
        (out / "status.json").write_text(json.dumps({"status": "failed", "error": line}))
        sys.stderr.write(f"ppo_continuous: {line}\n")
        return 1
    (out / "cost.json").write_text(json.dumps(r["cost"]))
    (out / "status.json").write_text(json.dumps(r["status"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
