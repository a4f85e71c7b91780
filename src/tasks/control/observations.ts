/**
 * The observed variables of the built-in simulators, in words: one definition per simulator,
 * shared by the hand-written tasks, the task families and the Gymnasium CartPole example.
 */
import type { VariableInfo } from '../../spec/brief.js';

/** CartPole-v1. */
export const CARTPOLE_OBS: VariableInfo[] = [
  { name: 'x', description: 'cart position (m), 0 at the centre, episode ends beyond ±2.4' },
  { name: 'x_dot', description: 'cart velocity (m/s)' },
  { name: 'theta', description: 'pole angle from upright (rad), episode ends beyond ±0.2095' },
  { name: 'theta_dot', description: 'pole angular velocity (rad/s)' },
];

/** Acrobot-v1. */
export const ACROBOT_OBS: VariableInfo[] = [
  { name: 'cos_theta1', description: 'cosine of the upper link angle (1 when hanging down)' },
  { name: 'sin_theta1', description: 'sine of the upper link angle' },
  { name: 'cos_theta2', description: 'cosine of the lower link angle relative to the upper' },
  { name: 'sin_theta2', description: 'sine of the lower link angle relative to the upper' },
  { name: 'theta1_dot', description: 'angular velocity of the upper link (rad/s)' },
  { name: 'theta2_dot', description: 'angular velocity of the lower link (rad/s)' },
];

/** MountainCar-v0. */
export const MOUNTAIN_CAR_OBS: VariableInfo[] = [
  { name: 'position', description: 'position of the car along the track, −1.2 to 0.6; the flag is at 0.5 (height is sin(3·position))' },
  { name: 'velocity', description: 'velocity of the car, −0.07 to 0.07' },
];

/** Pendulum-v1. */
export const PENDULUM_OBS: VariableInfo[] = [
  { name: 'cos_theta', description: 'cosine of the angle from upright (1 when upright)' },
  { name: 'sin_theta', description: 'sine of the angle from upright' },
  { name: 'theta_dot', description: 'angular velocity (rad/s), −8 to 8' },
];

/** PointMass-v0 (built in). */
export const POINT_MASS_OBS: VariableInfo[] = [
  { name: 'x', description: 'puck position along x (m), −1 to 1' },
  { name: 'y', description: 'puck position along y (m), −1 to 1' },
  { name: 'x_dot', description: 'puck velocity along x (m/s), −2 to 2' },
  { name: 'y_dot', description: 'puck velocity along y (m/s), −2 to 2' },
  {
    name: 'dx',
    description:
      "where this episode's target lies from the puck along x (m): target x − puck x; the target is fixed during the episode, anywhere in −0.9 to 0.9",
  },
  { name: 'dy', description: "where this episode's target lies from the puck along y (m): target y − puck y" },
];
