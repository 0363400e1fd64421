"""German: the day first, the month's name, the 24-hour clock (petstore/formats/)."""

DATE_FORMAT = "j. F Y"
DATETIME_FORMAT = "j. F Y, H:i"
SHORT_DATETIME_FORMAT = "d.m.Y, H:i:s"
