"""Charts as self-contained SVG text (no scripts, no fonts to fetch, nothing outside the file), for the
studies' plots and report: bars, stacked bars, lines over a shared x axis, a heat map and a timeline.
Each function returns one `<svg>` element; write it to a .svg file as is, or put it inline in HTML."""

import html
import math

FONT = 'font-family="sans-serif" font-size="11"'
# The first six are the charts' own; the rest tell more kinds apart (a timeline's operations).
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")


def _text(x, y, text, anchor="middle", extra=""):
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" {FONT} {extra}>{html.escape(str(text))}</text>'


def _text_width(text):
    """About how wide `text` is in the charts' 11-pixel sans-serif font, in pixels."""
    return 6.5 * len(str(text))


def _number(value):
    if value == 0:
        return "0"
    if abs(value) >= 1e6 or abs(value) < 1e-2:
        return f"{value:.3g}"
    # From 100 up to a million, whole numbers without an exponent (1596, not 1.6e+03).
    if abs(value) >= 100:
        return f"{value:.0f}"
    return f"{value:.3g}"


def _ticks(low, high, count=5):
    """Round tick values covering [low, high]."""
    if high <= low:
        high = low + 1
    step = 10 ** math.floor(math.log10((high - low) / count))
    for factor in (1, 2, 5, 10):
        if (high - low) / (step * factor) <= count:
            step *= factor
            break
    first = math.floor(low / step) * step
    # Up to the first tick at or above `high`: the charts scale to the last tick, so stopping below
    # `high` would draw the largest values past the plot's top edge (a bar of 3.13 over ticks 0..3).
    ticks = [round(first, 12)]
    while ticks[-1] < high - step * 1e-9:
        ticks.append(round(ticks[-1] + step, 12))
    return ticks


def _legend(x, y, entries, wrap_width):
    """Colour boxes with their names from (x, y), in lines no wider than `wrap_width`; the parts and
    the height they take."""
    parts, at, line = [], x, 0
    for name, colour in entries:
        step = 12 + 6 + _text_width(name) + 14
        if at > x and at + step - x > wrap_width:
            at, line = x, line + 1
        top = y + line * 18
        parts.append(f'<rect x="{at:.1f}" y="{top:.1f}" width="12" height="12" fill="{colour}"/>')
        parts.append(_text(at + 18, top + 10, name, anchor="start"))
        at += step
    return parts, (line + 1) * 18 if entries else 0


def bar_chart(title, labels, values, unit="", width=640, height=360, colour=COLOURS[0], css_class="bar-chart"):
    """Vertical bars, one per label, with the value written above each. Labels wider than their bar's
    slot (many bars, long names) stand on end, and values that do not fit above their bar are left to
    its tooltip, so that no text overlaps. Each bar carries its label and exact value as data-label and
    data-value, for readers of the markup."""
    # Room at the top for the title and, above the tallest bar, its value.
    left, right, top, bottom = 60, 20, 40, 60
    slot = (width - left - right) / max(len(values), 1)
    label_width = max((_text_width(label) for label in labels), default=0)
    upright = label_width > slot * 0.9
    if upright:
        bottom = min(max(bottom, label_width + 24), height // 2)
    plot_w, plot_h = width - left - right, height - top - bottom
    top_value = max([v for v in values if v is not None] + [0]) or 1
    ticks = _ticks(0, top_value)
    scale = plot_h / ticks[-1]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="{css_class}" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}">', _text(width / 2, 18, title, extra='font-weight="bold"')]
    for tick in ticks:
        y = top + plot_h - tick * scale
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#ddd"/>')
        parts.append(_text(left - 5, y + 4, _number(tick), anchor="end"))
    for i, (label, value) in enumerate(zip(labels, values)):
        x = left + i * slot + slot * 0.15
        bar_h = (value or 0) * scale
        parts.append(f'<rect x="{x:.1f}" y="{top + plot_h - bar_h:.1f}" width="{slot * 0.7:.1f}" '
                     f'height="{bar_h:.1f}" fill="{colour}" data-label="{html.escape(str(label))}" '
                     f'data-value="{value or 0}"><title>{html.escape(str(label))}: '
                     f'{html.escape(_number(value or 0))} {html.escape(unit)}</title></rect>')
        if _text_width(_number(value or 0)) <= slot:
            parts.append(_text(x + slot * 0.35, top + plot_h - bar_h - 4, _number(value or 0)))
        if upright:
            label_x, label_y = x + slot * 0.35 + 4, top + plot_h + 8
            parts.append(_text(label_x, label_y, label, anchor="end",
                               extra=f'transform="rotate(-90 {label_x:.1f} {label_y:.1f})"'))
        else:
            parts.append(_text(x + slot * 0.35, top + plot_h + 16, label))
    parts.append(f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#000"/>')
    if unit:
        parts.append(_text(14, top + plot_h / 2, unit, extra=f'transform="rotate(-90 14 {top + plot_h / 2:.1f})"'))
    parts.append("</svg>")
    return "\n".join(parts)


def stacked_bar_chart(title, labels, parts, values, unit="", x_label="", width=640, height=380,
                      label_attribute="label", css_class="stacked-bars"):
    """Vertical bars, one per label, each a stack of parts from the bottom up, with a legend of the
    parts. `parts` is [(key, name, colour)] and values[i] the i-th bar's value of each part. Each
    segment carries its bar's label, its part's key and its exact value as data-<label_attribute>,
    data-part and data-value, for readers of the markup: empty segments too, so that every bar has
    every part."""
    left, right, top, bottom = 60, 20, 56, 44
    plot_w, plot_h = width - left - right, height - top - bottom
    slot = plot_w / max(len(labels), 1)
    ticks = _ticks(0, max([sum(bar) for bar in values] + [0]) or 1)
    scale = plot_h / ticks[-1]
    # Label every bar that has a label's width, as the heat map labels its columns.
    label_every = max(1, math.ceil((max((_text_width(label) for label in labels), default=0) + 4) / slot))
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" class="{css_class}" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}">', _text(width / 2, 18, title, extra='font-weight="bold"')]
    legend, _ = _legend(left, 28, [(name, colour) for _, name, colour in parts], plot_w)
    svg += legend
    for tick in ticks:
        y = top + plot_h - tick * scale
        svg.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#ddd"/>')
        svg.append(_text(left - 5, y + 4, _number(tick), anchor="end"))
    for i, (label, bar) in enumerate(zip(labels, values)):
        x = left + i * slot + slot * 0.15
        y = top + plot_h
        named = f"{x_label} {label}".strip()
        for (key, name, colour), value in zip(parts, bar):
            y -= value * scale
            svg.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{slot * 0.7:.1f}" height="{value * scale:.1f}" '
                       f'fill="{colour}" data-{label_attribute}="{html.escape(str(label))}" '
                       f'data-part="{html.escape(key)}" data-value="{value}"><title>{html.escape(named)}: '
                       f'{html.escape(name)} {html.escape(_number(value))} {html.escape(unit)}</title></rect>')
        if i % label_every == 0:
            svg.append(_text(x + slot * 0.35, top + plot_h + 16, label))
    svg.append(f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#000"/>')
    if x_label:
        svg.append(_text(left + plot_w / 2, top + plot_h + 34, x_label))
    if unit:
        svg.append(_text(14, top + plot_h / 2, unit, extra=f'transform="rotate(-90 14 {top + plot_h / 2:.1f})"'))
    svg.append("</svg>")
    return "\n".join(svg)


def line_chart(title, x_label, xs, series, width=640, height=360):
    """Lines over a shared x axis; `series` is [(name, y values, y-axis label)], and each series gets
    an axis of its own scale (the first on the left, the second on the right), so that quantities of
    different units can share the picture."""
    left, right, top, bottom = 70, 70, 30, 70
    plot_w, plot_h = width - left - right, height - top - bottom
    x_low, x_high = min(xs), max(xs)
    x_span = (x_high - x_low) or 1
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="line-chart" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}">', _text(width / 2, 18, title, extra='font-weight="bold"')]
    parts.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#000"/>')
    for x in xs:
        px = left + (x - x_low) / x_span * plot_w
        parts.append(_text(px, top + plot_h + 16, _number(x)))
    parts.append(_text(left + plot_w / 2, top + plot_h + 34, x_label))
    for index, (name, ys, axis_label) in enumerate(series):
        colour = COLOURS[index % len(COLOURS)]
        known = [y for y in ys if y is not None]
        ticks = _ticks(min(known + [0]), max(known + [0]))
        low, high = ticks[0], ticks[-1]
        span = (high - low) or 1
        axis_x = left if index == 0 else left + plot_w
        for tick in ticks:
            y = top + plot_h - (tick - low) / span * plot_h
            parts.append(_text(axis_x + (-5 if index == 0 else 5), y + 4, _number(tick),
                               anchor="end" if index == 0 else "start", extra=f'fill="{colour}"'))
        label_x = 14 if index == 0 else width - 10
        parts.append(_text(label_x, top + plot_h / 2, axis_label,
                           extra=f'fill="{colour}" transform="rotate(-90 {label_x} {top + plot_h / 2:.1f})"'))
        points = [(left + (x - x_low) / x_span * plot_w, top + plot_h - (y - low) / span * plot_h)
                  for x, y in zip(xs, ys) if y is not None]
        parts.append('<polyline fill="none" stroke="{}" stroke-width="2" points="{}"/>'.format(
            colour, " ".join(f"{px:.1f},{py:.1f}" for px, py in points)))
        for px, py in points:
            parts.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{colour}"/>')
        parts.append(f'<rect x="{left + 10 + index * 160}" y="{height - 22}" width="12" height="12" fill="{colour}"/>')
        parts.append(_text(left + 26 + index * 160, height - 12, name, anchor="start"))
    parts.append("</svg>")
    return "\n".join(parts)


def heat_map(title, row_labels, column_labels, values, unit="", cell=None, css_class="heat-map"):
    """A matrix of values (rows x columns) as shaded cells, darker for larger values, with the value
    in each cell's tooltip. Cells shrink for large matrices so the map stays on a page. Each cell
    carries its row and column labels and exact value as data-row, data-column and data-value, for
    readers of the markup."""
    rows, columns = len(row_labels), len(column_labels)
    cell = cell or max(2, min(24, 480 // max(rows, columns, 1)))
    left, top = 60, 40
    # Wide enough for the title too (bold: a little wider than plain text), however few the cells.
    width = max(left + columns * cell + 20, int(_text_width(title) * 1.1) + 20)
    height = top + rows * cell + 40
    largest = max((v for row in values for v in row), default=0) or 1
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="{css_class}" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}">', _text(width / 2, 18, title, extra='font-weight="bold"')]
    # Label every row that has a line's height, and every column that has a label's width.
    label_every = max(1, math.ceil(12 / cell))
    column_label_every = max(1, math.ceil((max((_text_width(c) for c in column_labels), default=0) + 4) / cell))
    for r, label in enumerate(row_labels):
        if r % label_every == 0:
            parts.append(_text(left - 4, top + r * cell + cell / 2 + 4, label, anchor="end"))
        for c, value in enumerate(values[r]):
            shade = 255 - int(225 * (value / largest)) if value else 255
            parts.append(f'<rect x="{left + c * cell}" y="{top + r * cell}" width="{cell}" height="{cell}" '
                         f'fill="rgb({shade},{shade},255)" stroke="#eee" stroke-width="0.5" '
                         f'data-row="{html.escape(str(label))}" data-column="{html.escape(str(column_labels[c]))}" '
                         f'data-value="{value}">'
                         f'<title>{html.escape(str(label))} to {html.escape(str(column_labels[c]))}: '
                         f'{html.escape(_number(value))} {html.escape(unit)}</title></rect>')
    for c, label in enumerate(column_labels):
        if c % column_label_every == 0:
            parts.append(_text(left + c * cell + cell / 2, top - 4, label))
    parts.append(_text(left + columns * cell / 2, top + rows * cell + 20, f"largest: {_number(largest)} {unit}"))
    parts.append("</svg>")
    return "\n".join(parts)


def timeline_chart(title, row_labels, spans, keys, time_label, time_factor=1.0, fit_width=900, min_span_px=1,
                   max_width=20000, css_class="timeline-chart"):
    """Spans of time on rows (a Gantt chart): each span a rect on its row at its start, as long as it
    lasts, coloured by its key, with its tooltip; a legend of `keys` (in their order) and a time axis
    in time_factor x the spans' unit, labelled `time_label`. `spans` is [(row, start, length, key,
    tooltip, data)], data a dict of data- attributes for readers of the markup. The chart is
    `fit_width` pixels wide, wider until its shortest span is `min_span_px` wide, but no wider than
    `max_width`: put it in a box that scrolls. A span drawn narrower than `min_span_px` is drawn that
    wide, so that no call disappears."""
    left, right, row_height = 70, 20, 16
    end = max((start + length for _, start, length, *_ in spans), default=0) or 1
    shortest = min((length for _, _, length, *_ in spans if length > 0), default=None)
    scale = (fit_width - left - right) / end
    if shortest:
        scale = max(scale, min_span_px / shortest)
    scale = min(scale, (max_width - left - right) / end)
    plot_w = end * scale
    width = math.ceil(left + plot_w + right)
    colours = {key: COLOURS[i % len(COLOURS)] for i, key in enumerate(keys)}
    # Title and legend at the left, where the box that scrolls shows them first.
    legend, legend_height = _legend(left, 28, list(colours.items()), fit_width - left - right)
    top = 28 + legend_height + 22
    height = top + len(row_labels) * row_height + 8
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" class="{css_class}" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}">', _text(left, 18, title, anchor="start", extra='font-weight="bold"')]
    svg += legend
    for row, label in enumerate(row_labels):
        y = top + row * row_height
        if row % 2:
            svg.append(f'<rect x="{left}" y="{y}" width="{plot_w:.1f}" height="{row_height}" fill="#f4f4f4"/>')
        svg.append(_text(left - 6, y + row_height - 4, label, anchor="end"))
    # A tick every 150 pixels or so, however wide the chart grew.
    for tick in _ticks(0, end * time_factor, count=max(5, int(plot_w // 150))):
        x = left + tick / time_factor * scale
        if x > left + plot_w + 0.5:
            break
        svg.append(f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{height - 8}" stroke="#ddd"/>')
        svg.append(_text(x, top - 8, _number(tick)))
    svg.append(_text(left - 6, top - 8, time_label, anchor="end"))
    for row, start, length, key, tooltip, data in spans:
        attributes = "".join(f' data-{name}="{html.escape(str(value))}"' for name, value in data.items())
        svg.append(f'<rect x="{left + start * scale:.2f}" y="{top + row * row_height + 2}" '
                   f'width="{max(length * scale, min_span_px):.2f}" height="{row_height - 4}" fill="{colours[key]}"'
                   f'{attributes}><title>{html.escape(tooltip)}</title></rect>')
    svg.append("</svg>")
    return "\n".join(svg)
