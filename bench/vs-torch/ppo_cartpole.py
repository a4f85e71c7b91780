"""The PyTorch CPU reference of `npm run bench -- vs-torch`: PPO on CartPole-v1 at CleanRL's ppo.py defaults.

Settings (CleanRL's `ppo.py` defaults for CartPole-v1, the same the TypeScript side runs through
`cleanRlPpoSpec`): 4 envs x 128 steps per rollout, Adam 2.5e-4 (eps 1e-5) annealed linearly to 0, gamma 0.99,
GAE lambda 0.95, 4 epochs of 4 minibatches, advantages normalised per minibatch, clip 0.2 on the ratio and on
the value, entropy 0.01, value 0.5, gradient norm 0.5, separate 64-64 tanh actor and critic with orthogonal
initialisation (gain sqrt 2, 0.01 on the policy head, 1 on the value head).

The environment is a batched NumPy CartPole with Gymnasium's CartPole-v1 dynamics (euler, 500-step limit) and
CleanRL's same-step reset: a finished sub-environment's next observation is already its new episode's first.

Prints one line `SUMMARY {json}` with `steps_per_s` (env steps per second of training, evaluation excluded) and
`eval_mean_return` (mean return of greedy episodes after training); the bench reads those two fields.

    python ppo_cartpole.py --seed 1 --threads 1 --total-timesteps 100000 [--out-dir DIR]
"""

import argparse
import json
import math
import os
import time

import numpy as np
import torch
from torch import nn

# Gymnasium's CartPole-v1 constants.
G, M_CART, M_POLE, HALF_LEN, FORCE, DT = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
X_LIMIT, THETA_LIMIT, EPISODE_LIMIT = 2.4, 12 * 2 * math.pi / 360, 500


class CartPoles:
    """n CartPole-v1 environments stepped together; each resets from its own generator (seed + index)."""

    def __init__(self, n: int, seed: int):
        self.n = n
        self.gens = [np.random.default_rng(seed + i) for i in range(n)]
        self.s = np.zeros((n, 4))
        self.t = np.zeros(n, dtype=np.int64)
        self.ret = np.zeros(n)
        for i in range(n):
            self._start(i)

    def _start(self, i: int) -> None:
        self.s[i] = self.gens[i].uniform(-0.05, 0.05, 4)
        self.t[i] = 0
        self.ret[i] = 0.0

    def obs(self) -> np.ndarray:
        return self.s.astype(np.float32)

    def step(self, a: np.ndarray):
        """Advance every environment; returns (obs, reward, done, finished episodes as (index, return))."""
        x, v, th, w = self.s.T
        f = np.where(a == 1, FORCE, -FORCE)
        cos, sin = np.cos(th), np.sin(th)
        total = M_CART + M_POLE
        tmp = (f + M_POLE * HALF_LEN * w * w * sin) / total
        w_acc = (G * sin - cos * tmp) / (HALF_LEN * (4.0 / 3.0 - M_POLE * cos * cos / total))
        x_acc = tmp - M_POLE * HALF_LEN * w_acc * cos / total
        self.s = np.stack([x + DT * v, v + DT * x_acc, th + DT * w, w + DT * w_acc], axis=1)
        self.t += 1
        self.ret += 1.0
        fell = (np.abs(self.s[:, 0]) > X_LIMIT) | (np.abs(self.s[:, 2]) > THETA_LIMIT)
        done = fell | (self.t >= EPISODE_LIMIT)
        finished = []
        for i in np.flatnonzero(done):
            finished.append((int(i), float(self.ret[i])))
            self._start(int(i))
        return self.obs(), np.ones(self.n, dtype=np.float32), done, finished


def mlp(out: int, head_gain: float) -> nn.Sequential:
    layers = [nn.Linear(4, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, out)]
    for layer, gain in zip(layers[::2], (math.sqrt(2), math.sqrt(2), head_gain)):
        nn.init.orthogonal_(layer.weight, gain)
        nn.init.zeros_(layer.bias)
    return nn.Sequential(*layers)


def greedy_returns(actor: nn.Module, episodes: int, seed: int) -> list[float]:
    """Returns of `episodes` greedy episodes, one per environment, each from its own seed."""
    env = CartPoles(episodes, seed)
    out: dict[int, float] = {}
    obs = env.obs()
    with torch.no_grad():
        while len(out) < episodes:
            obs, _, _, finished = env.step(actor(torch.from_numpy(obs)).argmax(1).numpy())
            for i, r in finished:
                out.setdefault(i, r)
    return [out[i] for i in range(episodes)]


def train(args) -> dict:
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    n, T = args.num_envs, args.num_steps
    batch = n * T
    mb = batch // args.num_minibatches
    iterations = args.total_timesteps // batch
    actor, critic = mlp(2, 0.01), mlp(1, 1.0)
    params = [*actor.parameters(), *critic.parameters()]
    opt = torch.optim.Adam(params, lr=args.learning_rate, eps=1e-5)
    env = CartPoles(n, args.seed)

    obs_buf = torch.zeros(T, n, 4)
    act_buf = torch.zeros(T, n, dtype=torch.long)
    logp_buf = torch.zeros(T, n)
    rew_buf = torch.zeros(T, n)
    done_buf = torch.zeros(T, n)
    val_buf = torch.zeros(T, n)
    obs = torch.from_numpy(env.obs())
    done = torch.zeros(n)
    episodes: list[float] = []
    steps = 0
    start = time.perf_counter()

    for it in range(iterations):
        opt.param_groups[0]["lr"] = args.learning_rate * (1.0 - it / iterations)
        # Rollout.
        for t in range(T):
            obs_buf[t], done_buf[t] = obs, done
            with torch.no_grad():
                dist = torch.distributions.Categorical(logits=actor(obs))
                a = dist.sample()
                logp_buf[t], val_buf[t] = dist.log_prob(a), critic(obs).squeeze(1)
            act_buf[t] = a
            o, r, d, finished = env.step(a.numpy())
            episodes.extend(ret for _, ret in finished)
            obs, done = torch.from_numpy(o), torch.from_numpy(d.astype(np.float32))
            rew_buf[t] = torch.from_numpy(r)
            steps += n
        # Advantages (GAE) and returns.
        with torch.no_grad():
            next_v = critic(obs).squeeze(1)
            adv = torch.zeros(T, n)
            gae = torch.zeros(n)
            for t in reversed(range(T)):
                cont = 1.0 - (done if t == T - 1 else done_buf[t + 1])
                nv = next_v if t == T - 1 else val_buf[t + 1]
                delta = rew_buf[t] + args.gamma * nv * cont - val_buf[t]
                gae = delta + args.gamma * args.gae_lambda * cont * gae
                adv[t] = gae
            ret = adv + val_buf
        b_obs, b_act, b_logp = obs_buf.reshape(batch, 4), act_buf.reshape(batch), logp_buf.reshape(batch)
        b_adv, b_ret, b_val = adv.reshape(batch), ret.reshape(batch), val_buf.reshape(batch)
        # Update.
        for _ in range(args.update_epochs):
            order = torch.from_numpy(rng.permutation(batch))
            for k in range(0, batch, mb):
                idx = order[k : k + mb]
                dist = torch.distributions.Categorical(logits=actor(b_obs[idx]))
                ratio = (dist.log_prob(b_act[idx]) - b_logp[idx]).exp()
                a_mb = b_adv[idx]
                a_mb = (a_mb - a_mb.mean()) / (a_mb.std() + 1e-8)
                pg = torch.max(-a_mb * ratio, -a_mb * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v = critic(b_obs[idx]).squeeze(1)
                v_clip = b_val[idx] + (v - b_val[idx]).clamp(-args.clip_coef, args.clip_coef)
                v_loss = 0.5 * torch.max((v - b_ret[idx]) ** 2, (v_clip - b_ret[idx]) ** 2).mean()
                loss = pg - args.ent_coef * dist.entropy().mean() + args.vf_coef * v_loss
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(params, args.max_grad_norm)
                opt.step()

    wall = time.perf_counter() - start
    evals = greedy_returns(actor, args.eval_episodes, args.eval_seed)
    return {
        "seed": args.seed,
        "threads": args.threads,
        "torch_version": torch.__version__,
        "global_steps": steps,
        "train_wall_s": wall,
        "steps_per_s": steps / wall,
        "train_episodes": len(episodes),
        "last20_mean_return": float(np.mean(episodes[-20:])) if episodes else None,
        "eval_mean_return": float(np.mean(evals)),
        "eval_min_return": float(np.min(evals)),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--total-timesteps", type=int, default=100_000)
    p.add_argument("--out-dir", default=None, help="also write summary.json here")
    p.add_argument("--eval-episodes", type=int, default=100)
    p.add_argument("--eval-seed", type=int, default=10_000)
    # CleanRL's ppo.py defaults.
    p.add_argument("--learning-rate", type=float, default=2.5e-4)
    p.add_argument("--num-envs", type=int, default=4)
    p.add_argument("--num-steps", type=int, default=128)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--num-minibatches", type=int, default=4)
    p.add_argument("--update-epochs", type=int, default=4)
    p.add_argument("--clip-coef", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    args = p.parse_args()
    summary = train(args)
    if args.out_dir:
        os.makedirs(args.out_dir, exist_ok=True)
        with open(os.path.join(args.out_dir, "summary.json"), "w") as f:
            json.dump(summary, f, indent=2)
    print("SUMMARY " + json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
