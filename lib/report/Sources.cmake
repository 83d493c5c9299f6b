set(PROBE_SOURCES
  ReportData.cpp
  ReportHtml.cpp
  ReportPage.cpp
  ComparePage.cpp
  PrecisionPage.cpp
  WorstTable.cpp
)
