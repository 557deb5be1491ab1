/**
 * The soak harness: a real server in a JVM of its own, under a bounded mixed workload for a set
 * time and restarted on the way, checked against the harness's own model of what it acknowledged.
 * Talks to the server only through the generated gRPC stubs, and starts and stops it as a process.
 */
package dev.nepenthe.server.bench.soak;
