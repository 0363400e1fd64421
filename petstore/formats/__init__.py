"""How each language writes dates and times on the dashboard and in mail (Django's
FORMAT_MODULE_PATH): templates name a format (`|date:"DATETIME_FORMAT"`), never a pattern,
and UTC is said beside every time, as every time shown is UTC (TIME_ZONE).

What Django's own formats of the language say is kept; only these are the platform's:
DATE_FORMAT a day, DATETIME_FORMAT a day and its minute, SHORT_DATETIME_FORMAT to the second
(a check's, a log line's time)."""
