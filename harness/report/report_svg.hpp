#pragma once
// Hand-written SVG charts for reports: bars, grouped bars and step lines, linear or log axes.
// Plain data in, one SVG document (a string) out; every label is made visible and XML-escaped,
// every coordinate printed with one decimal, so the same data gives the same bytes. A NaN value
// lies on the axis and an infinity at the end it points to: no coordinate is ever "nan". A legend
// whose labels do not fit two columns takes one full-width column, so labels are not cut.
#include <string>
#include <vector>

namespace genrepro {

// One bar per category, e.g. nucleus size per temperature.
struct BarChartSpec {
  std::string title;
  std::string y_label;
  bool log_y = false;
  std::vector<std::string> categories;    // under each bar
  std::vector<double> values;
  std::vector<std::string> value_labels;  // above each bar (e.g. "14,905")
};

// Several series per category group, e.g. the top-5 probabilities at each temperature.
struct GroupedBarChartSpec {
  std::string title;
  std::string y_label;
  std::vector<std::string> groups;              // along x (tokens and "everything else")
  std::vector<std::string> series;              // one bar per series in each group (temperatures)
  std::vector<std::vector<double>> values;      // [series][group]
};

struct LineSeries {
  std::string label;
  std::vector<double> x;
  std::vector<double> y;
  bool emphasized = false;  // drawn thicker (e.g. greedy among sampled runs)
  std::string color;        // "#rrggbb"; empty: the palette's colour (and dash) for the series' position
  std::string dash;         // with `color`: an SVG stroke-dasharray ("" solid), see palette_dash
  // When both are as long as x: a translucent band from band_lo to band_hi (an interquartile range).
  std::vector<double> band_lo;
  std::vector<double> band_hi;
};

// A published value drawn on a chart (the article's numbers): a black diamond and its label.
struct ChartMarker {
  double x = 0;
  double y = 0;
  std::string label;
};

// Step lines, e.g. the kept-set size at each step of each run.
struct LineChartSpec {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_y = false;
  bool fixed_y = false;  // use [y_min, y_max] instead of the data's range (linear axes only)
  double y_min = 0;
  double y_max = 1;
  std::vector<LineSeries> series;
  // When not empty, the y axis spans these values instead of the series' own: panels of one
  // small multiple share their axis, so the same height means the same value in each.
  std::vector<double> axis_values;
  std::vector<ChartMarker> markers;
  double width = 720;  // narrower charts (grid summaries' small multiples) stand two abreast
};

// A forest plot: one row per cell, a dot at its estimate and a line over its interval, every
// run's own value as a small dot behind, rows grouped in facets (one per prompt) on one x axis.
struct ForestRow {
  std::string label;
  std::string color;  // "#rrggbb"
  double value = 0;
  double lo = 0;
  double hi = 0;
  std::string value_label;     // right of the plot, e.g. "0.40 [0.20, 0.60]"
  std::vector<double> points;  // every run's value (NaN: not drawn)
};

struct ForestFacet {
  std::string title;
  std::vector<ForestRow> rows;
};

struct ForestChartSpec {
  std::string title;
  std::string x_label;
  bool fixed_x = false;  // [x_min, x_max] instead of [0, the data's nice ceiling]
  double x_min = 0;
  double x_max = 1;
  std::vector<ForestFacet> facets;
  double width = 470;
};

// A heatmap: one row per item (grouped: a group's label heads its rows), one column per
// category, each cell a colour, an optional short mark drawn in it and a tooltip (<title>) naming
// it. A frame left of and below the cells stands for the axes (the screenshot test finds them).
// Column labels are drawn above the cells, and again below them when there are many rows.
struct HeatmapCell {
  std::string color;  // "#rrggbb"
  std::string mark;   // drawn in the cell when it is wide enough (e.g. the new token of a divergence)
  std::string tooltip;
};

struct HeatmapLegendEntry {
  std::string label;
  std::string color;
};

struct HeatmapSpec {
  std::string title;
  std::vector<std::string> columns;
  std::vector<std::string> rows;
  std::vector<std::string> row_groups;          // per row; a group heading where it changes
  std::vector<std::vector<HeatmapCell>> cells;  // [row][column]
  std::vector<HeatmapLegendEntry> legend;
};

std::string svg_bar_chart(const BarChartSpec& spec);
std::string svg_heatmap(const HeatmapSpec& spec);
std::string svg_grouped_bar_chart(const GroupedBarChartSpec& spec);
std::string svg_line_chart(const LineChartSpec& spec);
std::string svg_forest_chart(const ForestChartSpec& spec);

// The palette's colour for position i (Okabe–Ito, then repeating): fixed per parameter value by
// whoever numbers the values.
std::string palette_color(size_t i);
// The dash pattern that tells position i from i + 8 (the palette repeats after eight colours).
std::string palette_dash(size_t i);

}  // namespace genrepro
