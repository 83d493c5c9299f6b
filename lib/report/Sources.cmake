probe_component(report USES grad support
  SOURCES
  ReportData.cpp
  ReportHtml.cpp
  ReportPage.cpp
  ComparePage.cpp
  PrecisionPage.cpp
  WorstTable.cpp
  GradPage.cpp
)
