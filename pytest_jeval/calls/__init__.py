"""Running model calls: the background scheduler, the response cache and ahead-of-time prefetch."""
