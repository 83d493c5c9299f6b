probe_component(report USES grad support
  SOURCES
  ReportCsv.cpp
  ReportData.cpp
  ReportHtml.cpp
  ReportPage.cpp
  ComparePage.cpp
  PrecisionPage.cpp
  WorstTable.cpp
  GradPage.cpp
)
