"""The volume API's resources, one module each."""
