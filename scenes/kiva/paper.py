"""The paper's model rows: accuracy per domain and stage (%) computed from the model
responses its authors released with the public data (every trial asked three times, mean
over all runs; a stage-2 question skipped after a wrong stage-1 answer counts as wrong, as
the released scripts only ask stage 2 after a right stage-1 answer). Rows ``(what, how,
extrapolation, runs)``. The paper shows human accuracy only as figures (adults near 100%
at every stage, children well above chance), so no human row is given in numbers here.
"""
from __future__ import annotations

MODELS = {
    "kiva": {
        "proprietary model, separate images": {
            "colour": (100.0, 97.8, 96.0, 454), "number": (74.3, 38.5, 25.5, 600), "reflection": (77.3, 26.0, 29.7, 300),
            "rotation": (99.6, 64.7, 28.9, 450), "size": (94.7, 94.3, 77.3, 300)},
        "proprietary model, stitched": {
            "colour": (99.8, 96.9, 76.4, 450), "number": (90.5, 54.7, 33.5, 600), "reflection": (95.3, 55.0, 34.7, 300),
            "rotation": (99.3, 59.3, 36.0, 450), "size": (88.0, 86.7, 55.3, 300)},
        "open multi-image model, separate images": {
            "colour": (99.3, 52.7, 36.4, 450), "number": (86.2, 42.3, 32.8, 600), "reflection": (83.3, 51.3, 32.0, 300),
            "rotation": (91.8, 46.9, 37.1, 450), "size": (39.7, 20.0, 34.3, 300)},
        "open single-image model, stitched": {
            "colour": (73.3, 48.9, 29.8, 450), "number": (50.7, 22.3, 28.3, 600), "reflection": (64.3, 29.0, 28.3, 300),
            "rotation": (66.7, 32.4, 33.3, 450), "size": (25.3, 15.3, 29.3, 300)},
    },
    "kiva_adults": {
        "proprietary model, separate images": {
            "colour": (99.7, 92.4, 92.7, 750), "number": (83.5, 41.4, 26.3, 1200), "reflection": (79.8, 20.9, 32.9, 450),
            "rotation": (97.0, 41.5, 30.0, 1050), "size": (70.7, 38.2, 43.7, 600)},
        "proprietary model, stitched": {
            "colour": (99.5, 94.9, 73.1, 750), "number": (90.9, 56.0, 35.5, 1200), "reflection": (93.8, 42.9, 37.1, 450),
            "rotation": (96.4, 50.9, 38.5, 750), "size": (70.4, 52.7, 49.2, 900)},
        "open multi-image model, separate images": {
            "colour": (95.5, 52.3, 34.4, 750), "number": (86.3, 34.0, 33.2, 1200), "reflection": (86.2, 43.6, 33.3, 450),
            "rotation": (93.5, 46.0, 40.0, 1050), "size": (38.3, 18.4, 33.1, 900)},
        "open single-image model, stitched": {
            "colour": (74.0, 41.2, 31.5, 750), "number": (50.9, 21.5, 28.7, 1200), "reflection": (66.2, 36.4, 30.0, 450),
            "rotation": (69.0, 23.3, 34.4, 1050), "size": (24.2, 9.0, 31.7, 900)},
    },
}
