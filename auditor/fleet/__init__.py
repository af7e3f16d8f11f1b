"""Fleet audits: many sites at once, politely, on this machine or a Dask cluster."""
