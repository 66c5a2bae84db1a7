"""The request tally (codeyard.metrics.RequestTally): what it adds in bulk is what one observation
at a time through prometheus_client would give."""

from __future__ import annotations

import pytest
from prometheus_client import REGISTRY

from codeyard import metrics


def test_bulk_added_requests_match_single_observations():
    route = "/unit/:tally"
    durations = [0.0005, 0.001, 0.003, 0.2, 100.0]
    for seconds in durations:
        metrics.record_request(route, "GET", 200, seconds)
    metrics.record_request(route, "BREW", 405, 0.0001)
    metrics.requests.flush()

    def bucket(le: str) -> float:
        return REGISTRY.get_sample_value("codeyard_http_request_duration_seconds_bucket", {"route": route, "method": "GET", "le": le})

    assert REGISTRY.get_sample_value("codeyard_http_requests_total", {"route": route, "method": "GET", "status": "200"}) == 5
    assert REGISTRY.get_sample_value("codeyard_http_requests_total", {"route": route, "method": "OTHER", "status": "405"}) == 1
    # Prometheus' buckets are cumulative and inclusive of their bound: 0.001 falls in le="0.001".
    assert [bucket(le) for le in ("0.001", "0.0025", "0.005", "0.25", "30.0", "+Inf")] == [2, 2, 3, 4, 4, 5]
    labels = {"route": route, "method": "GET"}
    assert REGISTRY.get_sample_value("codeyard_http_request_duration_seconds_count", labels) == 5
    assert REGISTRY.get_sample_value("codeyard_http_request_duration_seconds_sum", labels) == pytest.approx(sum(durations))
    metrics.requests.flush()  # nothing pending: nothing added twice
    assert REGISTRY.get_sample_value("codeyard_http_request_duration_seconds_count", labels) == 5
