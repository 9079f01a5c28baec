"""Train a two-layer tanh network with gradients srctrans derives from plain NumPy.

Run it with ``python samples/mlp.py``. The loss is ordinary NumPy code;
``st.value_and_grad`` turns it into a function returning the loss and its
gradients with respect to the four weight arrays, which plain gradient
descent then follows on a toy regression problem (fit ``sin(3x)``).

See the generated code from the command line too:
``srctrans samples/mlp.py:loss --wrt w1,b1,w2,b2``.
"""

import numpy as np

import srctrans as st


def loss(w1, b1, w2, b2, x, y):
    """Mean squared error of the network ``tanh(x @ w1 + b1) @ w2 + b2`` on ``(x, y)``."""
    hidden = np.tanh(x @ w1 + b1)
    prediction = hidden @ w2 + b2
    return np.mean((prediction - y) ** 2)


loss_and_gradients = st.value_and_grad(loss, wrt=(0, 1, 2, 3))


def main(steps=200, learning_rate=0.2, hidden_units=16):
    rng = np.random.default_rng(0)
    x = np.linspace(-1.0, 1.0, 64).reshape(-1, 1)
    y = np.sin(3.0 * x)
    params = [rng.normal(0.0, 1.0, (1, hidden_units)), np.zeros(hidden_units),
              rng.normal(0.0, 1.0 / np.sqrt(hidden_units), (hidden_units, 1)), np.zeros(1)]

    for step in range(steps + 1):
        value, gradients = loss_and_gradients(*params, x, y)
        if step % 50 == 0:
            print(f"step {step:3d}  loss {value:.5f}")
        if step < steps:
            params = [p - learning_rate * g for p, g in zip(params, gradients)]
    print(f"final loss {value:.5f}")

    print("\nThe backward pass srctrans generated for these shapes (first lines):")
    text = st.source(loss, wrt=(0, 1, 2, 3), args=(*params, x, y))
    backward = text[text.index("def loss_bwd"):].splitlines()
    print("\n".join(backward[:12]))


if __name__ == "__main__":
    main()
