probe_component(report USES support
  SOURCES
  ReportData.cpp
  ReportHtml.cpp
  ReportPage.cpp
  ComparePage.cpp
  PrecisionPage.cpp
  WorstTable.cpp
)
