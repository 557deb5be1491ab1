/**
 * The server under load on loopback: search throughput and latency with concurrent clients, beside
 * forgets; the benchmark suite runs it with store-server's class path. May use the grpc package,
 * its generated stubs and the seeded fixtures (store-test-fixtures).
 */
package dev.nepenthe.server.bench;
