"""Fit the drag of a projectile to observed positions, differentiating an ODE solver's loop.

Run it with ``python samples/projectile.py`` (add ``--plot fit.png`` to save a chart
of the fit when matplotlib is installed). A ball is thrown at 30 m/s and 50 degrees
and slowed by air drag proportional to its speed squared, ``dv/dt = -g e_y - k |v| v``.
``simulate`` integrates that with explicit Euler steps in a plain ``for`` loop;
``misfit`` compares the path with noisy observations. srctrans differentiates through
every step of the loop, and gradient descent on ``log k`` and the launch speed
recovers both from the observations alone.
"""

import argparse

import numpy as np

import srctrans as st

G = 9.81                      # m/s^2


def simulate(log_k, speed, angle, dt, steps):
    """Positions ``(xs, ys)`` after each of ``steps`` Euler steps of length ``dt``."""
    k = np.exp(log_k)
    x, y = 0.0, 0.0
    vx, vy = speed * np.cos(angle), speed * np.sin(angle)
    xs, ys = [], []
    for _ in range(steps):
        drag = k * np.sqrt(vx * vx + vy * vy)
        vx, vy = vx - dt * drag * vx, vy - dt * (G + drag * vy)
        x, y = x + dt * vx, y + dt * vy
        xs.append(x)
        ys.append(y)
    return np.array(xs), np.array(ys)


def misfit(log_k, speed, observed_x, observed_y, angle, dt):
    """Mean squared distance between the simulated and the observed positions."""
    xs, ys = simulate(log_k, speed, angle, dt, observed_x.shape[0])
    return np.mean((xs - observed_x) ** 2 + (ys - observed_y) ** 2)


misfit_and_gradient = st.value_and_grad(misfit, wrt=("log_k", "speed"))


def fit(observed_x, observed_y, angle, dt, iterations, log_k=np.log(0.05), speed=20.0):
    """Gradient descent (with a step that adapts to each parameter's scale) from a guess."""
    scale = np.zeros(2)
    for iteration in range(iterations + 1):
        value, (d_log_k, d_speed) = misfit_and_gradient(log_k, speed, observed_x, observed_y,
                                                        angle, dt)
        if iteration % max(1, iterations // 5) == 0:
            print(f"iteration {iteration:4d}  misfit {value:9.5f}  "
                  f"k {np.exp(log_k):.4f}  speed {speed:6.3f}")
        gradient = np.array([d_log_k, d_speed])
        scale = 0.9 * scale + 0.1 * gradient * gradient            # RMSProp
        step = 0.05 * gradient / (np.sqrt(scale) + 1e-12)
        log_k, speed = log_k - step[0], speed - step[1]
    return log_k, speed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--plot", metavar="PNG", help="save a chart of the fit (needs matplotlib)")
    options = parser.parse_args(argv)

    true_log_k, true_speed, angle, dt, steps = np.log(0.02), 30.0, np.radians(50.0), 0.02, 200
    xs, ys = simulate(true_log_k, true_speed, angle, dt, steps)
    rng = np.random.default_rng(0)
    observed_x = xs + rng.normal(0.0, 0.3, steps)
    observed_y = ys + rng.normal(0.0, 0.3, steps)

    log_k, speed = fit(observed_x, observed_y, angle, dt, options.iterations)
    print(f"fitted k {np.exp(log_k):.4f} (true {np.exp(true_log_k):.4f}), "
          f"speed {speed:.3f} m/s (true {true_speed:.3f})")
    if options.plot:
        save_plot(options.plot, observed_x, observed_y, simulate(log_k, speed, angle, dt, steps))
    return log_k, speed


def save_plot(path, observed_x, observed_y, fitted):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no plot: matplotlib is not installed (pip install -e \".[plot]\")")
        return
    figure, axes = plt.subplots(figsize=(6.0, 3.5))
    axes.plot(observed_x, observed_y, ".", markersize=3, label="observed")
    axes.plot(*fitted, label="fitted path")
    axes.set_xlabel("x (m)")
    axes.set_ylabel("y (m)")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
