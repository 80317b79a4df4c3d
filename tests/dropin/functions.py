"""Ten functions no one here tuned, each as its source wrote it (named beside it), with the inputs
it takes: what the drop-ins are tried on (tests/test_dropin_functions.py).

``NUMBA``: whether ``numba.njit`` compiles it unchanged (where not, words of the compiler's reason).
``CUPY``: whether it runs unchanged on CuPy arrays (where not, words of the reason), as seen on a GPU.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.signal
import scipy.special


def _rng(n):
    return np.random.default_rng(0)


def softmax(inputs):
    """SciPy's documentation of scipy.special.softmax: exp(x) / sum(exp(x)), shifted by the max."""
    (x,) = inputs
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


def go_fast(inputs):
    """Numba's 'A ~5 minute guide to Numba': a loop over the diagonal, then an array expression."""
    (a,) = inputs
    trace = 0.0
    for i in range(a.shape[0]):
        trace += np.tanh(a[i, i])
    return a + trace


def rescale(inputs):
    """scikit-image's rescale_intensity, as its user guide's 'contrast stretching' does it by hand:
    the 2nd and 98th percentiles stretched to 0..1, clipped."""
    (img,) = inputs
    lo, hi = np.percentile(img, 2), np.percentile(img, 98)
    return np.clip((img - lo) / (hi - lo), 0.0, 1.0)


def histogram_counts(inputs):
    """NumPy's documentation of numpy.histogram: the counts of 10 equal bins."""
    (x,) = inputs
    counts, _ = np.histogram(x, bins=10, range=(0.0, 1.0))
    return counts


def power_spectrum(inputs):
    """NumPy's documentation of numpy.fft: the power of a signal's spectrum."""
    (x,) = inputs
    return np.abs(np.fft.rfft(x)) ** 2


def savgol(inputs):
    """SciPy's documentation of scipy.signal.savgol_filter: window 5, polynomial order 2."""
    (x,) = inputs
    return scipy.signal.savgol_filter(x, 5, 2)


def vectorized(inputs):
    """NumPy's documentation of numpy.vectorize: 'Return a-b if a>b, otherwise return a+b'."""
    a, b = inputs

    def myfunc(p, q):
        return p - q if p > q else p + q
    return np.vectorize(myfunc)(a, b)


def pairwise_distances(inputs):
    """NumPy's 'Broadcasting' guide: the distance of every observation to every code (vector
    quantisation), here each point of x to each of a few centres."""
    x, centres = inputs
    diff = x[:, np.newaxis] - centres[np.newaxis, :]
    return np.sqrt(diff * diff)


def logistic(inputs):
    """SciPy's documentation of scipy.special.expit: the logistic sigmoid, as its formula writes it."""
    (x,) = inputs
    return 1.0 / (1.0 + np.exp(-x))


def group_means(inputs):
    """pandas' user guide, 'Group by: split-apply-combine': the mean of each group."""
    (frame,) = inputs
    return frame.groupby("key")["value"].mean().to_numpy()


def _vector(n):
    return (np.random.default_rng(0).random(n),)


def _square(n):
    side = max(2, int(np.sqrt(n)))
    return (np.random.default_rng(0).random((side, side)),)


def _pair(n):
    rng = np.random.default_rng(0)
    return rng.random(n), rng.random(n)


def _centres(n):
    rng = np.random.default_rng(0)
    return rng.random(n), rng.random(4)


def _frame(n):
    rng = np.random.default_rng(0)
    return (pd.DataFrame({"key": rng.integers(0, 16, n), "value": rng.random(n)}),)


#: name: (function, setup, Numba: True or words of its reason, CuPy: True or words of its reason)
FUNCTIONS = {
    "softmax": (softmax, _vector, True, True),
    "go_fast": (go_fast, _square, True, "loops in Python over the elements"),
    "rescale": (rescale, _square, True, True),
    "histogram_counts": (histogram_counts, _vector, True, True),
    "power_spectrum": (power_spectrum, _vector, "Unknown attribute 'rfft'", True),
    "savgol": (savgol, _vector, "Unknown attribute", "falls back to the host"),
    "vectorized": (vectorized, _pair, "vectorize", "falls back to the host"),
    "pairwise_distances": (pairwise_distances, _centres, True, True),
    "logistic": (logistic, _vector, True, True),
    "group_means": (group_means, _frame, "non-precise type", "takes no NumPy array"),
}
