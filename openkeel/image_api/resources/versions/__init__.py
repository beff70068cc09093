"""Version discovery (/ and /versions) and /v2/info/*: what this image service offers."""
