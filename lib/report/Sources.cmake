set(PROBE_SOURCES
  ReportData.cpp
  ReportHtml.cpp
  ReportPage.cpp
  WorstTable.cpp
)
