/**
 * The cluster's benchmark harness ({@code ./nepenthe bench cluster}): ingest and search throughput
 * with one and three replicas beside a single server, forget, failover and catch-up times, every
 * replica in one JVM on loopback.
 */
package dev.nepenthe.cluster.bench;
