"""English: ISO 8601's order, which reads the same everywhere (petstore/formats/)."""

DATE_FORMAT = "Y-m-d"
DATETIME_FORMAT = "Y-m-d H:i"
SHORT_DATETIME_FORMAT = "Y-m-d H:i:s"
