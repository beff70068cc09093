"""Virt layer: the driver interface compute knows (driver.py), its value types and errors, and
the drivers (fake.py now; kubevirt/ later). Compute imports only driver, model and errors."""
