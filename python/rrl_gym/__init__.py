"""Gymnasium side of recursive-rl: the vectorised environment bridge (``rrl_gym.bridge``), its
wire format (``rrl_gym.frames``) and a CleanRL-style PyTorch PPO command trainer
(``rrl_gym/ppo_continuous.py``)."""
