"""A log-linear latency histogram (HDR style): bounded memory, bounded relative error.

Values are whole microseconds. Below 2**PRECISION_BITS each microsecond has its own bucket; above,
every power of two is cut into 2**(PRECISION_BITS - 1) equal buckets, so a bucket is never wider
than 2**-(PRECISION_BITS - 1) of its lower bound. A quantile is reported as its bucket's midpoint
(clamped to the exact minimum and maximum seen), hence within RELATIVE_ERROR of the true value:
with 8 bits, 0.4 %. Values above MAX_MICROSECONDS (about 71 minutes) are counted in the last
bucket and the exact maximum is kept aside. The whole histogram is one list of BUCKETS counts
(about 3,300), whatever the number of values: a soak of days costs what a run of seconds does.

Standard library only; recording a value is a few integer operations (no allocation).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

PRECISION_BITS = 8
LINEAR = 1 << PRECISION_BITS  # 256 one-microsecond buckets
HALF = LINEAR >> 1  # buckets per power of two above the linear range
MAX_MICROSECONDS = (1 << 32) - 1
BUCKETS = LINEAR + (32 - PRECISION_BITS) * HALF
RELATIVE_ERROR = 1 / (1 << PRECISION_BITS)  # of a reported quantile, relative to the true value
# The layout's name in every load document: the same for every run, so buckets of runs add up. A change
# to PRECISION_BITS or MAX_MICROSECONDS is a new layout, and `load --merge` refuses to mix two.
LAYOUT = f"log-linear-{PRECISION_BITS}-{MAX_MICROSECONDS.bit_length()}"


def bucket_of(value: int) -> int:
    if value < LINEAR:
        return value if value > 0 else 0
    if value > MAX_MICROSECONDS:
        value = MAX_MICROSECONDS
    shift = value.bit_length() - PRECISION_BITS
    return LINEAR + (shift - 1) * HALF + ((value >> shift) - HALF)


def bounds_of(index: int) -> tuple[int, int]:
    """The values [low, high) bucket `index` counts."""
    if index < LINEAR:
        return index, index + 1
    shift, offset = divmod(index - LINEAR, HALF)
    shift += 1
    low = (HALF + offset) << shift
    return low, low + (1 << shift)


class Histogram:
    __slots__ = ("counts", "count", "total", "_low", "_high")

    def __init__(self) -> None:
        self.counts = [0] * BUCKETS
        self.count = 0
        self.total = 0  # microseconds, for the mean
        self._low = 1 << 64  # the least value recorded (none yet: above any)
        self._high = -1  # the greatest

    @property
    def minimum(self) -> int | None:
        return self._low if self.count else None

    @property
    def maximum(self) -> int | None:
        return self._high if self.count else None

    def record(self, microseconds: int) -> None:
        """`bucket_of` inlined: this runs twice per request of a load."""
        value = microseconds if microseconds > 0 else 0
        if value < LINEAR:
            self.counts[value] += 1
        else:
            capped = value if value <= MAX_MICROSECONDS else MAX_MICROSECONDS
            shift = capped.bit_length() - PRECISION_BITS
            self.counts[LINEAR + (shift - 1) * HALF + (capped >> shift) - HALF] += 1
        self.count += 1
        self.total += value
        if value < self._low:
            self._low = value
        if value > self._high:
            self._high = value

    def add_bucket(self, low: int, high: int, count: int) -> None:
        """`count` values in the bucket [low, high) of this layout (a document's bucket, read back);
        ValueError when no bucket of the layout has these bounds."""
        index = bucket_of(low)
        if bounds_of(index) != (low, high) or count < 1:
            raise ValueError(f"no bucket [{low}, {high}) in layout {LAYOUT}")
        self.counts[index] += count
        self.count += count
        self.total += count * ((low + high - 1) // 2 if high - low > 1 else low)
        self._low = min(self._low, low)
        self._high = max(self._high, high - 1)

    def bound(self, minimum: int | None, maximum: int | None) -> None:
        """The exact least and greatest values, where they are known (a document's min and max): a
        histogram read back from buckets knows them only to a bucket."""
        if self.count and minimum is not None and maximum is not None:
            self._low, self._high = minimum, maximum

    def merge(self, other: Histogram) -> None:
        if not other.count:
            return
        counts = self.counts
        for index, n in enumerate(other.counts):
            if n:
                counts[index] += n
        self.count += other.count
        self.total += other.total
        self._low = min(self._low, other._low)
        self._high = max(self._high, other._high)

    def quantile(self, q: float) -> int | None:
        """The value at quantile q (0..1) in microseconds, within RELATIVE_ERROR; None when empty."""
        if not self.count:
            return None
        assert self.minimum is not None and self.maximum is not None
        if q <= 0:
            return self.minimum
        if q >= 1:
            return self.maximum
        rank = max(1, -(-int(q * self.count * 1_000_000) // 1_000_000))  # ceil(q * count), float-safe
        seen = 0
        for index, n in enumerate(self.counts):
            seen += n
            if seen >= rank:
                low, high = bounds_of(index)
                middle = low if high - low == 1 else (low + high - 1) // 2
                return min(max(middle, self.minimum), self.maximum)
        return self.maximum

    def mean(self) -> float | None:
        return self.total / self.count if self.count else None

    def buckets(self) -> Iterator[tuple[int, int, int]]:
        """(low, high, count) of every bucket that counted something, in order."""
        for index, n in enumerate(self.counts):
            if n:
                low, high = bounds_of(index)
                yield low, high, n

    def to_json(self) -> dict[str, Any]:
        """The histogram as every load document carries it: the layout's name and each bucket that
        counted something, so that the buckets of several runs add up (`load --merge`)."""
        return {"unit": "us", "relativeError": RELATIVE_ERROR, "layout": LAYOUT,
                "buckets": [{"fromUs": low, "toUs": high, "count": count} for low, high, count in self.buckets()]}

    def coarse(self, bins: int = 40) -> list[dict[str, Any]]:
        """The distribution in at most `bins` log-spaced bins between min and max, for drawing and for
        the JSON document: [{"fromUs", "toUs", "count"}]. Every value is in exactly one bin."""
        if not self.count:
            return []
        assert self.minimum is not None and self.maximum is not None
        low, high = max(self.minimum, 1), max(self.maximum, 1) + 1
        ratio = (high / low) ** (1 / bins) if high > low else 2.0
        edges = [low]
        while edges[-1] < high and len(edges) <= bins:
            edges.append(max(edges[-1] + 1, int(round(edges[-1] * ratio))))
        edges[-1] = max(edges[-1], high)
        if self.minimum == 0:
            edges[0] = 0
        out = [{"fromUs": edges[i], "toUs": edges[i + 1], "count": 0} for i in range(len(edges) - 1)]
        j = 0
        for low_b, high_b, n in self.buckets():
            value = (low_b + high_b - 1) // 2 if high_b - low_b > 1 else low_b
            value = min(max(value, self.minimum), self.maximum)
            while j < len(out) - 1 and value >= out[j]["toUs"]:
                j += 1
            out[j]["count"] += n
        return out
