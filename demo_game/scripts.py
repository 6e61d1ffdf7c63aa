"""Scripted scenarios: tool actions by frame number, so a run can be watched, captured or tested.

dig-channel (the canonical scenario): after a short look at the calm lake, the player drags the dig
tool back and forth across the ridge between the lake and the dry valley until the channel is below
the lake's surface; the lake then drains through it into the valley and down to the sea.
Deterministic: the same frames always apply the same edits at the same grid points.
"""
from __future__ import annotations

import numpy as np


class DigChannel:
    name = "dig-channel"
    START = 30                  # frames of calm before digging
    PASS_FRAMES = 40            # frames per stroke across the ridge
    PASSES = 4

    def __init__(self, game):
        marks = game.world.landmarks
        self.start = np.array(marks["ridge_west"], float)
        self.stop = np.array(marks["ridge_east"], float)
        self.end_frame = self.START + self.PASS_FRAMES * self.PASSES

    def stroke_point(self, frame):
        """Grid point under the cursor at `frame`, or None when not digging."""
        k = frame - self.START
        if k < 0 or frame >= self.end_frame:
            return None
        stroke, f = divmod(k, self.PASS_FRAMES)
        t = f / (self.PASS_FRAMES - 1)
        if stroke % 2:
            t = 1.0 - t
        return self.start + t * (self.stop - self.start)

    def before_frame(self, game, frame) -> None:
        point = self.stroke_point(frame)
        if point is not None:
            game.tool = "dig"
            game.use_tool("dig", float(point[0]), float(point[1]))


SCRIPTS = {DigChannel.name: DigChannel}
