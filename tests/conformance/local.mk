# conformance
