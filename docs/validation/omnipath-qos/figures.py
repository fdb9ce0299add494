"""Draw the figures of docs/validation/omnipath-qos.md from sweeps written by `flitsim sweep`.

    python docs/validation/omnipath-qos/figures.py NAME=DIR...

For each sweep, `NAME-latency.png` (mean message latency per SL, the paper's end-to-end
latency, against the total offered load, one panel per scheduler) and `NAME-share.png`
(normalized throughput per SL), both with the 95 % confidence band over the sweep's seeds,
next to this script.
"""
import sys
from pathlib import Path

from flitsim.plot import save_figure, sl_latency_vs_offered_figure, sl_share_vs_offered_figure

HERE = Path(__file__).resolve().parent


def main(args):
    for arg in args:
        name, _, directory = arg.partition("=")
        lat = sl_latency_vs_offered_figure(directory, metric="message_latency_mean")
        print(save_figure(lat, HERE / f"{name}-latency.png", "png"))
        share = sl_share_vs_offered_figure(directory)
        print(save_figure(share, HERE / f"{name}-share.png", "png"))


if __name__ == "__main__":
    main(sys.argv[1:])
