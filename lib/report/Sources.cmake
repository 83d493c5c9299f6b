set(PROBE_SOURCES
  ReportData.cpp
  ReportHtml.cpp
  WorstTable.cpp
)
