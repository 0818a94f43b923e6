#pragma once
// DIR/sensitivity.html: the numerics sensitivity matrix as one self-contained page (inline SVG
// and CSS, no scripts, nothing fetched): the heatmap of runs by cells coloured by class, the
// survival curves, the class shares, the one-factor attribution, the margin predictor beside
// MarginGate's figure, and the predictor on held-out cells (docs/sensitivity.md).
//
// It lives in report, not beside the Markdown writer in compare: the charts are report_svg's
// and the page is report_html's renderer, and compare may not include report (the layer table).
#include <cstddef>
#include <string>
#include <vector>

#include "compare/sensitivity.hpp"
#include "report/report_document.hpp"
#include "report/report_svg.hpp"

namespace genrepro {

// The colour each class has on the heatmap and in its legend (Okabe-Ito: bluish green, yellow,
// vermillion; a light grey for no run), so tests can look for them in the pixels.
const char* class_color(CellClass c);

// The heatmap's data: a row per run (grouped by experiment), a column per cell.
HeatmapSpec sensitivity_heatmap(const SensitivityMatrix& m);
// One survival line per cell: x = new tokens t, y = share of runs still agreeing with the reference.
// Its legend labels the cells as the heatmap's columns do; lines that coincide are dashed apart.
LineChartSpec sensitivity_survival_chart(const SensitivityMatrix& m);
// The cells whose survival lines are the same line, each group in cell order (groups of two or more).
std::vector<std::vector<std::size_t>> coinciding_survival_lines(const SensitivityMatrix& m);

ReportContent sensitivity_page_content(const SensitivityMatrix& m);
std::string sensitivity_html(const SensitivityMatrix& m);

}  // namespace genrepro
