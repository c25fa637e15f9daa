"""The TMA family's split of a launch into CTAs, from its config name (src/kernels/tma/tma_shape.h in Python), for the
timeline tools (exits_by_part.py, tail_rate.py)."""
import re

SMS = 132
STAGE_K = 64
CONFIG = re.compile(r"tma_m\d+_r(\d+)_b(\d+)_s(\d+)_(?:c(\d+)_d(\d+)|x(\d+)|c(\d+)_u(\d+))$")


def lead_split(n, k, rows, boxes, per_sm, lead, sms=SMS):
    """(parts, stages of part 0, stages of the tile): lead_split_grid_for."""
    k_stages = (k + STAGE_K * boxes - 1) // (STAGE_K * boxes)
    tiles = (n + rows - 1) // rows
    parts = max(1, min(per_sm * sms // tiles, k_stages, 16))
    part0 = lambda p: (k_stages + (p - 1) * lead) // p
    while parts > 1 and k_stages - part0(parts) < parts - 1:
        parts -= 1
    return parts, part0(parts), k_stages


def lead_parts(n, k, config, sms=SMS):
    """lead_split for a lead-split config name (tma_..._c<c>_d<lead>), else None."""
    f = CONFIG.match(config)
    if not f or f.group(5) is None:
        return None
    return lead_split(n, k, int(f.group(1)), int(f.group(2)), int(f.group(4)), int(f.group(5)), sms)


def stages_per_cta(n, k, config, ctas, sms=SMS):
    """(per CTA in blockIdx order the K stages it streams, bytes of one stage's weights, ring slots), or None."""
    f = CONFIG.match(config)
    if not f:
        return None
    rows, boxes, ring = int(f.group(1)), int(f.group(2)), int(f.group(3))
    tiles, k_stages = (n + rows - 1) // rows, (k + STAGE_K * boxes - 1) // (STAGE_K * boxes)
    stage_bytes = rows * boxes * STAGE_K * 2
    if f.group(5) is not None:  # lead split: part 0 [0, lead_stages), the others share the rest
        parts, lead_stages, _ = lead_split(n, k, rows, boxes, int(f.group(4)), int(f.group(5)), sms)
        first = lambda j: 0 if j == 0 else lead_stages + (j - 1) * (k_stages - lead_stages) // (parts - 1)
        last = lambda j: k_stages if j == parts - 1 else first(j + 1)  # parts == 1: every stage
        counts = [last(g % parts) - first(g % parts) for g in range(ctas)]
    elif f.group(6) is not None:  # cluster split-K: equal shares of the tile's stages
        x = int(f.group(6))
        counts = [(r + 1) * k_stages // x - r * k_stages // x for r in (g % x for g in range(ctas))]
    else:  # stream-K: equal contiguous ranges of all units
        units = tiles * k_stages
        counts = [(g + 1) * units // ctas - g * units // ctas for g in range(ctas)]
    return counts, stage_bytes, ring
