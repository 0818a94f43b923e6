#include "report/report_svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "report/report_text.hpp"

namespace genrepro {

namespace {

// Layout in SVG user units (pixels at 100%).
constexpr double kWidth = 720;
constexpr double kMarginLeft = 78;   // room for "100,000" tick labels and the rotated y label
constexpr double kMarginRight = 20;
constexpr double kMarginTop = 36;    // the title
constexpr double kPlotHeight = 250;
constexpr double kAxisBelow = 46;    // tick labels and the x label
constexpr double kLegendRow = 18;
constexpr int kLegendColumns = 2;
constexpr size_t kLegendMaxChars = 40;    // ~7 px per character at 12 px fits half the plot width
constexpr size_t kWideLegendMaxChars = 85;  // the same, for the whole plot width (one column)
constexpr size_t kCategoryMaxChars = 16;  // "everything else" fits
constexpr int kCoordDecimals = 1;
constexpr int kLinearTicks = 5;

// Okabe–Ito colours (distinguishable with the common colour-vision deficiencies), then four of
// Paul Tol's muted scheme, so a grid of up to twelve cells gives each cell its own colour; after
// twelve series the dash pattern changes.
const char* const kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
                                "#000000", "#8C6D31", "#882255", "#44AA99", "#999933", "#AA4499"};
constexpr size_t kPaletteSize = sizeof kPalette / sizeof kPalette[0];
const char* const kDashes[] = {"", "6 3", "2 3"};
constexpr size_t kDashCount = sizeof kDashes / sizeof kDashes[0];

std::string num(double v) { return format_fixed(v, kCoordDecimals); }

std::string label_text(const std::string& raw, size_t max_chars) {
  std::string visible = visible_text(raw, false);
  // Cut on a UTF-8 boundary, counting code points, so a long label cannot break the layout.
  size_t count = 0;
  for (size_t i = 0; i < visible.size(); ++i) {
    if ((static_cast<unsigned char>(visible[i]) & 0xC0) != 0x80 && ++count > max_chars) {
      visible = visible.substr(0, i) + "\xE2\x80\xA6";  // …
      break;
    }
  }
  return xml_escape(visible);
}

class Svg {
 public:
  Svg(double height, const std::string& title, double width = kWidth) {
    out_ << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\"" << num(height)
         << "\" viewBox=\"0 0 " << num(width) << " " << num(height)
         << "\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
         << "<title>" << label_text(title, std::string::npos) << "</title>\n"
         << "<rect x=\"0\" y=\"0\" width=\"" << num(width) << "\" height=\"" << num(height) << "\" fill=\"#ffffff\"/>\n";
    text(width / 2, 22, title, "middle", "font-size=\"15\" font-weight=\"bold\"", std::string::npos);
  }
  // A closed, translucent shape (a band between two lines).
  void polygon(const std::vector<std::pair<double, double>>& pts, const std::string& fill, double opacity) {
    out_ << "<polygon fill=\"" << fill << "\" fill-opacity=\"" << format_fixed(opacity, 2) << "\" stroke=\"none\" points=\"";
    for (size_t i = 0; i < pts.size(); ++i) out_ << (i ? " " : "") << num(pts[i].first) << "," << num(pts[i].second);
    out_ << "\"/>\n";
  }
  void circle_faint(double x, double y, double r, const std::string& fill, double opacity) {
    out_ << "<circle cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"" << num(r) << "\" fill=\"" << fill
         << "\" fill-opacity=\"" << format_fixed(opacity, 2) << "\"/>\n";
  }

  void line(double x1, double y1, double x2, double y2, const std::string& stroke, double width, const std::string& dash = "") {
    out_ << "<line x1=\"" << num(x1) << "\" y1=\"" << num(y1) << "\" x2=\"" << num(x2) << "\" y2=\"" << num(y2)
         << "\" stroke=\"" << stroke << "\" stroke-width=\"" << num(width) << "\"" << dash_attr(dash) << "/>\n";
  }
  void rect(double x, double y, double w, double h, const std::string& fill) {
    out_ << "<rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(std::max(0.0, w)) << "\" height=\""
         << num(std::max(0.0, h)) << "\" fill=\"" << fill << "\"/>\n";
  }
  // A rectangle with a tooltip: its <title> child, shown on hover and read by screen readers.
  void rect_titled(double x, double y, double w, double h, const std::string& fill, const std::string& title) {
    out_ << "<rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(std::max(0.0, w)) << "\" height=\""
         << num(std::max(0.0, h)) << "\" fill=\"" << fill << "\"><title>" << label_text(title, std::string::npos) << "</title></rect>\n";
  }
  void circle(double x, double y, double r, const std::string& fill) {
    out_ << "<circle cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"" << num(r) << "\" fill=\"" << fill << "\"/>\n";
  }
  void polyline(const std::vector<std::pair<double, double>>& pts, const std::string& stroke, double width, const std::string& dash) {
    out_ << "<polyline fill=\"none\" stroke=\"" << stroke << "\" stroke-width=\"" << num(width) << "\"" << dash_attr(dash)
         << " stroke-linejoin=\"round\" points=\"";
    for (size_t i = 0; i < pts.size(); ++i) out_ << (i ? " " : "") << num(pts[i].first) << "," << num(pts[i].second);
    out_ << "\"/>\n";
  }
  void text(double x, double y, const std::string& raw, const char* anchor, const std::string& extra = "", size_t max_chars = kLegendMaxChars) {
    out_ << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" text-anchor=\"" << anchor << "\""
         << (extra.empty() ? "" : " " + extra) << ">" << label_text(raw, max_chars) << "</text>\n";
  }
  std::string finish() {
    out_ << "</svg>\n";
    return out_.str();
  }

 private:
  static std::string dash_attr(const std::string& dash) {
    return dash.empty() ? std::string() : " stroke-dasharray=\"" + dash + "\"";
  }
  std::ostringstream out_;
};

// A y axis: value -> pixel, and the ticks to draw.
struct YAxis {
  bool log = false;
  double lo = 0;  // for log axes, powers of ten (as exponents)
  double hi = 1;
  double top = kMarginTop;
  double bottom = kMarginTop + kPlotHeight;

  // Every value a chart draws passes here: NaN lies on the axis (no bar, no height) and an
  // infinity at the end it points to, so no coordinate is ever "nan" (the text beside it shows
  // report_text.hpp's kNotANumber).
  double map(double v) const {
    if (std::isnan(v)) return bottom;
    double t = 0;
    if (log) {
      const double e = v > 0 ? std::log10(v) : lo;
      t = (std::clamp(e, lo, hi) - lo) / (hi - lo);
    } else {
      t = (std::clamp(v, lo, hi) - lo) / (hi - lo);
    }
    return bottom - t * (bottom - top);
  }

  std::vector<double> ticks() const {
    std::vector<double> out;
    if (log) {
      for (double e = lo; e <= hi + 1e-9; e += 1) out.push_back(std::pow(10.0, e));
    } else {
      const double step = (hi - lo) / kLinearTicks;
      for (int i = 0; i <= kLinearTicks; ++i) out.push_back(lo + step * i);
    }
    return out;
  }
};

std::string tick_label(double v, bool log) {
  if (log && v >= 1) return format_count(static_cast<int64_t>(std::llround(v)));
  if (log) return format_param(v);
  return format_fixed(v, 2);
}

// Smallest "nice" number (1, 2 or 5 times a power of ten) >= v, for linear axis tops.
double nice_ceiling(double v) {
  if (!(v > 0)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * p >= v * (1 - 1e-12)) return m * p;
  }
  return 10 * p;
}

YAxis make_y_axis(const std::vector<double>& values, bool log, bool fixed, double fixed_lo, double fixed_hi) {
  YAxis a;
  a.log = log;
  double lo = 0;
  double hi = 0;
  bool any = false;
  for (double v : values) {
    if (!std::isfinite(v) || (log && v <= 0)) continue;
    lo = any ? std::min(lo, v) : v;
    hi = any ? std::max(hi, v) : v;
    any = true;
  }
  if (log) {
    a.lo = any ? std::min(0.0, std::floor(std::log10(lo))) : 0;  // counts start at 1
    a.hi = any ? std::ceil(std::log10(hi)) : 1;
    if (a.hi <= a.lo) a.hi = a.lo + 1;
  } else if (fixed) {
    a.lo = fixed_lo;
    a.hi = fixed_hi > fixed_lo ? fixed_hi : fixed_lo + 1;
  } else {
    a.lo = 0;
    a.hi = nice_ceiling(any ? hi : 1);
  }
  return a;
}

void draw_y_axis(Svg& svg, const YAxis& axis, const std::string& label, double width = kWidth) {
  const double left = kMarginLeft;
  const double right = width - kMarginRight;
  for (double t : axis.ticks()) {
    const double y = axis.map(t);
    svg.line(left, y, right, y, "#e4e4e4", 1);
    svg.text(left - 6, y + 4, tick_label(t, axis.log), "end");
  }
  svg.line(left, axis.top, left, axis.bottom, "#555555", 1);
  svg.line(left, axis.bottom, right, axis.bottom, "#555555", 1);
  const double mid = (axis.top + axis.bottom) / 2;
  svg.text(16, mid, label, "middle", "transform=\"rotate(-90 16 " + num(mid) + ")\"", std::string::npos);
}

struct LegendEntry {
  std::string label;
  std::string color;
  std::string dash;
  bool as_line = true;
};

// Characters a legend label may take in a chart `width` wide with `columns` columns (about 7 px
// per character at 12 px, less the 30 px of the swatch): kLegendMaxChars and kWideLegendMaxChars
// at the default width.
size_t legend_max_chars(double width, int columns) {
  if (width == kWidth) return columns == 1 ? kWideLegendMaxChars : kLegendMaxChars;
  return static_cast<size_t>(((width - kMarginLeft - kMarginRight) / columns - 30) / 7);
}

// The width a chart needs so that its longest legend label fits one column whole (a label is
// never cut: a grid's cell labels name a framework and its controls).
double width_for_legend(const std::vector<std::string>& labels, double width) {
  size_t longest = 0;
  for (const std::string& l : labels) {
    size_t chars = 0;
    for (unsigned char c : visible_text(l, false)) chars += (c & 0xC0) != 0x80;
    longest = std::max(longest, chars);
  }
  return std::max(width, kMarginLeft + kMarginRight + 30 + 7.0 * static_cast<double>(longest) + 7);
}

// Two columns when every label fits half the width; otherwise one, so no label is cut short.
int legend_columns(const std::vector<std::string>& labels, double width = kWidth) {
  for (const std::string& l : labels)
    if (label_text(l, legend_max_chars(width, kLegendColumns)) != label_text(l, std::string::npos)) return 1;
  return kLegendColumns;
}

double legend_height(size_t entries, int columns) {
  const size_t rows = (entries + columns - 1) / columns;
  return rows * kLegendRow + (entries ? 8 : 0);
}

void draw_legend(Svg& svg, const std::vector<LegendEntry>& entries, double top, int columns, double width = kWidth) {
  const double column_width = (width - kMarginLeft - kMarginRight) / columns;
  const size_t max_chars = legend_max_chars(width, columns);
  for (size_t i = 0; i < entries.size(); ++i) {
    const double x = kMarginLeft + (i % columns) * column_width;
    const double y = top + (i / columns) * kLegendRow + 12;
    if (entries[i].as_line) {
      svg.line(x, y - 4, x + 24, y - 4, entries[i].color, 2.5, entries[i].dash);
    } else {
      svg.rect(x + 6, y - 10, 12, 12, entries[i].color);
    }
    svg.text(x + 30, y, entries[i].label, "start", "", max_chars);
  }
}

}  // namespace

std::string svg_bar_chart(const BarChartSpec& spec) {
  const double height = kMarginTop + kPlotHeight + kAxisBelow;
  Svg svg(height, spec.title);
  const YAxis axis = make_y_axis(spec.values, spec.log_y, false, 0, 0);
  draw_y_axis(svg, axis, spec.y_label);
  const size_t n = spec.categories.size();
  const double slot = (kWidth - kMarginLeft - kMarginRight) / static_cast<double>(std::max<size_t>(n, 1));
  const double bar = slot * 0.55;
  for (size_t i = 0; i < n; ++i) {
    const double v = i < spec.values.size() ? spec.values[i] : 0;
    const double x = kMarginLeft + slot * i + (slot - bar) / 2;
    const double y = axis.map(v);
    svg.rect(x, y, bar, axis.bottom - y, kPalette[0]);
    if (i < spec.value_labels.size()) svg.text(x + bar / 2, y - 5, spec.value_labels[i], "middle", "font-weight=\"bold\"");
    svg.text(x + bar / 2, axis.bottom + 18, spec.categories[i], "middle", "", kCategoryMaxChars);
  }
  return svg.finish();
}

std::string svg_grouped_bar_chart(const GroupedBarChartSpec& spec) {
  const int columns = legend_columns(spec.series);
  const double height = kMarginTop + kPlotHeight + kAxisBelow + legend_height(spec.series.size(), columns);
  Svg svg(height, spec.title);
  std::vector<double> all;
  for (const auto& s : spec.values) all.insert(all.end(), s.begin(), s.end());
  const YAxis axis = make_y_axis(all, false, false, 0, 0);
  draw_y_axis(svg, axis, spec.y_label);
  const size_t groups = spec.groups.size();
  const size_t series = spec.series.size();
  const double slot = (kWidth - kMarginLeft - kMarginRight) / static_cast<double>(std::max<size_t>(groups, 1));
  const double bar = slot * 0.8 / static_cast<double>(std::max<size_t>(series, 1));
  for (size_t g = 0; g < groups; ++g) {
    const double x0 = kMarginLeft + slot * g + slot * 0.1;
    for (size_t s = 0; s < series; ++s) {
      const double v = (s < spec.values.size() && g < spec.values[s].size()) ? spec.values[s][g] : 0;
      const double y = axis.map(v);
      svg.rect(x0 + bar * s, y, bar * 0.92, axis.bottom - y, kPalette[s % kPaletteSize]);
    }
    svg.text(kMarginLeft + slot * g + slot / 2, axis.bottom + 18, spec.groups[g], "middle", "", kCategoryMaxChars);
  }
  std::vector<LegendEntry> legend;
  for (size_t s = 0; s < series; ++s) legend.push_back({spec.series[s], kPalette[s % kPaletteSize], "", false});
  draw_legend(svg, legend, kMarginTop + kPlotHeight + kAxisBelow, columns);
  return svg.finish();
}

std::string svg_line_chart(const LineChartSpec& spec) {
  std::vector<std::string> labels;
  for (const auto& s : spec.series) labels.push_back(s.label);
  if (!spec.markers.empty()) labels.push_back("the article");
  const double width = width_for_legend(labels, spec.width);
  const int columns = legend_columns(labels, width);
  const double height = kMarginTop + kPlotHeight + kAxisBelow + legend_height(labels.size(), columns);
  Svg svg(height, spec.title, width);
  std::vector<double> ys;
  for (const ChartMarker& m : spec.markers) ys.push_back(m.y);
  double x_max = 1;
  double x_min = 1;
  bool any_x = false;
  for (const auto& s : spec.series) {
    ys.insert(ys.end(), s.y.begin(), s.y.end());
    for (double x : s.x) {
      if (!std::isfinite(x)) continue;
      x_min = any_x ? std::min(x_min, x) : x;
      x_max = any_x ? std::max(x_max, x) : x;
      any_x = true;
    }
  }
  if (x_max <= x_min) x_max = x_min + 1;
  const YAxis axis = make_y_axis(spec.axis_values.empty() ? ys : spec.axis_values, spec.log_y, spec.fixed_y, spec.y_min, spec.y_max);
  draw_y_axis(svg, axis, spec.y_label, width);
  const double left = kMarginLeft;
  const double right = width - kMarginRight;
  const auto map_x = [&](double x) { return left + (x - x_min) / (x_max - x_min) * (right - left); };
  // x ticks: about six, at round step numbers; whole numbers when every x is one (new tokens:
  // "1.5" names no token).
  bool whole_x = true;
  for (const auto& s : spec.series)
    for (double x : s.x) whole_x = whole_x && (!std::isfinite(x) || x == std::floor(x));
  const double step = whole_x ? std::max(1.0, nice_ceiling((x_max - x_min) / 6)) : nice_ceiling((x_max - x_min) / 6);
  for (double t = std::ceil(x_min / step) * step; t <= x_max + 1e-9; t += step) {
    svg.line(map_x(t), axis.bottom, map_x(t), axis.bottom + 4, "#555555", 1);
    svg.text(map_x(t), axis.bottom + 17, format_param(t), "middle");
  }
  svg.text((left + right) / 2, axis.bottom + 36, spec.x_label, "middle", "", std::string::npos);
  std::vector<LegendEntry> legend;
  // Bands first, so every line lies over every band.
  for (size_t i = 0; i < spec.series.size(); ++i) {
    const auto& s = spec.series[i];
    if (s.band_lo.size() != s.x.size() || s.band_hi.size() != s.x.size()) continue;
    std::vector<std::pair<double, double>> band;
    for (size_t k = 0; k < s.x.size(); ++k)
      if (std::isfinite(s.x[k])) band.emplace_back(map_x(s.x[k]), axis.map(s.band_hi[k]));
    for (size_t k = s.x.size(); k-- > 0;)
      if (std::isfinite(s.x[k])) band.emplace_back(map_x(s.x[k]), axis.map(s.band_lo[k]));
    if (band.size() > 2) svg.polygon(band, s.color.empty() ? kPalette[i % kPaletteSize] : s.color, 0.18);
  }
  for (size_t i = 0; i < spec.series.size(); ++i) {
    const auto& s = spec.series[i];
    const std::string color = s.color.empty() ? kPalette[i % kPaletteSize] : s.color;
    const std::string dash = s.color.empty() ? kDashes[(i / kPaletteSize) % kDashCount] : s.dash;
    std::vector<std::pair<double, double>> pts;
    for (size_t k = 0; k < s.x.size() && k < s.y.size(); ++k) {
      if (std::isfinite(s.x[k]) && std::isfinite(s.y[k])) pts.emplace_back(map_x(s.x[k]), axis.map(s.y[k]));
    }
    const double width = s.emphasized ? 3 : 1.6;
    if (pts.size() > 1) svg.polyline(pts, color, width, dash);
    if (!pts.empty()) svg.circle(pts.back().first, pts.back().second, width + 1.2, color);  // where the run ended
    legend.push_back({s.label, color, dash, true});
  }
  for (const ChartMarker& m : spec.markers) {
    const double x = map_x(m.x), y = axis.map(m.y);
    svg.polygon({{x, y - 6}, {x + 6, y}, {x, y + 6}, {x - 6, y}}, "#000000", 1);
    svg.text(x + 9, y + 4, m.label, "start", "font-weight=\"bold\"");
  }
  if (!spec.markers.empty()) legend.push_back({"the article", "#000000", "", false});
  draw_legend(svg, legend, kMarginTop + kPlotHeight + kAxisBelow, columns, width);
  return svg.finish();
}

std::string palette_color(size_t i) { return kPalette[i % kPaletteSize]; }
std::string palette_dash(size_t i) { return kDashes[(i / kPaletteSize) % kDashCount]; }

std::string svg_forest_chart(const ForestChartSpec& spec) {
  // Rows of kRow px: a facet's title, then one per cell; labels left, values right of the plot.
  constexpr double kRow = 18;
  constexpr double kValueWidth = 118;
  constexpr double kPad = 6;  // no estimate sits on the y axis: the axis stays visible
  constexpr double kRowChar = 6.2;  // px a character at 11 px
  constexpr double kMinPlot = 260;
  // The row labels whole: their column is as wide as the longest ("llama.cpp T=0.7 top_k=40
  // top_p=0.95 min_p=0.05"), at least 150 px, and the chart widens rather than cut one.
  size_t longest = 0;
  for (const ForestFacet& f : spec.facets)
    for (const ForestRow& r : f.rows) {
      size_t chars = 0;
      for (unsigned char c : visible_text(r.label, false)) chars += (c & 0xC0) != 0x80;
      longest = std::max(longest, chars);
    }
  const double label_width = std::max(150.0, 12 + kRowChar * static_cast<double>(longest));
  const double width = std::max(spec.width, label_width + kMinPlot + kValueWidth);
  size_t rows = 0;
  for (const ForestFacet& f : spec.facets) rows += 1 + f.rows.size();
  const double top = kMarginTop;
  const double bottom = top + kRow * static_cast<double>(std::max<size_t>(rows, 1)) + 4;
  const double height = bottom + 40;
  Svg svg(height, spec.title, width);
  const double left = label_width;
  const double right = width - kValueWidth;
  double lo = spec.x_min, hi = spec.x_max;
  if (!spec.fixed_x) {
    double top_value = 0;
    for (const ForestFacet& f : spec.facets)
      for (const ForestRow& r : f.rows) {
        for (double v : {r.value, r.lo, r.hi}) if (std::isfinite(v)) top_value = std::max(top_value, v);
        for (double v : r.points) if (std::isfinite(v)) top_value = std::max(top_value, v);
      }
    lo = 0;
    hi = nice_ceiling(top_value);
  }
  if (!(hi > lo)) hi = lo + 1;
  const auto map_x = [&](double v) {
    if (std::isnan(v)) v = lo;
    return left + kPad + (std::clamp(v, lo, hi) - lo) / (hi - lo) * (right - left - 2 * kPad);
  };
  // The two axes first: the screenshot test finds a chart's axes as its first two #555555 lines.
  svg.line(left, top, left, bottom, "#555555", 1);
  svg.line(left, bottom, right, bottom, "#555555", 1);
  for (int i = 0; i <= 4; ++i) {
    const double v = lo + (hi - lo) * i / 4;
    svg.line(map_x(v), top, map_x(v), bottom, "#e4e4e4", 1);
    svg.text(map_x(v), bottom + 15, hi - lo >= 4 ? format_param(v) : format_fixed(v, 2), "middle");
  }
  svg.text((left + right) / 2, bottom + 32, spec.x_label, "middle", "", std::string::npos);
  double y = top;
  for (const ForestFacet& f : spec.facets) {
    svg.text(6, y + 13, f.title, "start", "font-weight=\"bold\"", static_cast<size_t>((width - 12) / 7));
    y += kRow;
    for (const ForestRow& r : f.rows) {
      const double mid = y + kRow / 2;
      svg.text(left - 6, mid + 4, r.label, "end", "font-size=\"11\"", std::string::npos);
      for (size_t k = 0; k < r.points.size(); ++k) {
        if (!std::isfinite(r.points[k])) continue;
        const double jitter = (static_cast<double>(k % 5) - 2) * 1.6;  // fixed, so the bytes stay the same
        svg.circle_faint(map_x(r.points[k]), mid + jitter, 1.8, r.color, 0.35);
      }
      if (std::isfinite(r.lo) && std::isfinite(r.hi)) {
        svg.line(map_x(r.lo), mid, map_x(r.hi), mid, r.color, 2.2);
        svg.line(map_x(r.lo), mid - 4, map_x(r.lo), mid + 4, r.color, 1.5);
        svg.line(map_x(r.hi), mid - 4, map_x(r.hi), mid + 4, r.color, 1.5);
      }
      if (std::isfinite(r.value)) svg.circle(map_x(r.value), mid, 4, r.color);
      svg.text(right + 6, mid + 4, r.value_label, "start", "", std::string::npos);
      y += kRow;
    }
  }
  return svg.finish();
}

std::string svg_heatmap(const HeatmapSpec& spec) {
  // Rows stay readable in the hundreds: 13 px each, the run's label beside it, a group heading
  // (its experiment) where the group changes; columns narrow to fit the page but not below 14 px.
  constexpr double kRow = 13;
  constexpr double kGroupRow = 17;
  constexpr double kRowChar = 5.6;     // px a character at 10 px
  constexpr double kColumnChar = 6.2;  // at 11 px
  constexpr size_t kColumnLabelChars = 26;
  constexpr size_t kRepeatColumnsAfter = 40;  // rows; then the column labels are drawn below too
  const auto chars = [](const std::string& s) {
    size_t n = 0;
    for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
    return n;
  };
  // The label column as wide as the longest row label, up to 300 px (longer ones are cut with "…").
  size_t longest_row = 1, longest_column = 1;
  for (const std::string& r : spec.rows) longest_row = std::max(longest_row, chars(r));
  for (const std::string& c : spec.columns) longest_column = std::min(kColumnLabelChars, std::max(longest_column, chars(c)));
  const double label_width = std::clamp(20 + kRowChar * static_cast<double>(longest_row), 120.0, 300.0);
  const auto row_label_chars = static_cast<size_t>((label_width - 20) / kRowChar);
  const double column_label_height = 12 + 0.71 * kColumnChar * static_cast<double>(longest_column);  // at 45 degrees
  const size_t columns = spec.columns.size();
  const double column = std::clamp((kWidth - label_width - kMarginRight) / static_cast<double>(std::max<size_t>(columns, 1)), 14.0, 56.0);
  const double width = std::max(kWidth, label_width + column * static_cast<double>(columns) + column_label_height + kMarginRight);
  size_t groups = 0;
  for (size_t r = 0; r < spec.rows.size(); ++r)
    groups += r < spec.row_groups.size() && (r == 0 || spec.row_groups[r] != spec.row_groups[r - 1]);
  const double legend_top = kMarginTop;
  const int legend_per_row = 2;  // "same tokens, different bits" whole
  const double legend_rows = std::ceil(static_cast<double>(spec.legend.size()) / legend_per_row);
  const double grid_top = legend_top + legend_rows * kLegendRow + 8 + column_label_height;
  const double grid_height = kRow * static_cast<double>(spec.rows.size()) + kGroupRow * static_cast<double>(groups);
  const double grid_bottom = grid_top + grid_height;
  const bool repeat = spec.rows.size() > kRepeatColumnsAfter;
  const double height = grid_bottom + 8 + (repeat ? column_label_height : 0) + 12;
  Svg svg(height, spec.title, width);
  const double legend_width = (width - kMarginLeft - kMarginRight) / legend_per_row;
  for (size_t i = 0; i < spec.legend.size(); ++i) {
    const double x = kMarginLeft + static_cast<double>(i % legend_per_row) * legend_width;
    const double y = legend_top + static_cast<double>(i / legend_per_row) * kLegendRow + 12;
    svg.rect(x, y - 10, 12, 12, spec.legend[i].color);
    svg.text(x + 18, y, spec.legend[i].label, "start", "", static_cast<size_t>((legend_width - 20) / 7));
  }
  const auto column_labels = [&](double y, bool above) {
    for (size_t c = 0; c < columns; ++c) {
      const double x = label_width + column * (static_cast<double>(c) + 0.5) + 4;
      const std::string rotate = "transform=\"rotate(" + std::string(above ? "-45 " : "45 ") + num(x) + " " + num(y) + ")\"";
      svg.text(x, y, spec.columns[c], "start", rotate + " font-size=\"11\"", kColumnLabelChars);
    }
  };
  column_labels(grid_top - 6, true);
  // The frame first (left, then bottom), 2 px from the cells so their colours never cover it.
  svg.line(label_width - 2, grid_top, label_width - 2, grid_bottom + 2, "#555555", 1);
  svg.line(label_width - 2, grid_bottom + 2, label_width + column * static_cast<double>(columns), grid_bottom + 2, "#555555", 1);
  double y = grid_top;
  for (size_t r = 0; r < spec.rows.size(); ++r) {
    if (r < spec.row_groups.size() && (r == 0 || spec.row_groups[r] != spec.row_groups[r - 1])) {
      svg.text(6, y + 13, spec.row_groups[r], "start", "font-weight=\"bold\"", static_cast<size_t>((width - 12) / 7));
      y += kGroupRow;
    }
    svg.text(label_width - 8, y + kRow - 3, spec.rows[r], "end", "font-size=\"10\"", row_label_chars);
    for (size_t c = 0; c < columns; ++c) {
      const HeatmapCell cell = r < spec.cells.size() && c < spec.cells[r].size() ? spec.cells[r][c] : HeatmapCell{"#ffffff", "", ""};
      const double x = label_width + column * static_cast<double>(c);
      svg.rect_titled(x + 0.5, y + 0.5, column - 1, kRow - 1, cell.color, cell.tooltip);
      if (!cell.mark.empty() && column >= 20)
        svg.text(x + column / 2, y + kRow - 3, cell.mark, "middle", "font-size=\"9\" font-weight=\"bold\" fill=\"#ffffff\"", 5);
    }
    y += kRow;
  }
  if (repeat) column_labels(grid_bottom + 14, false);
  return svg.finish();
}

}  // namespace genrepro
