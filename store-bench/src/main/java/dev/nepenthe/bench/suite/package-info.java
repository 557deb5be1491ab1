/**
 * One command for every benchmark ({@code ./nepenthe bench all}): runs each step in a JVM of its
 * own or under JMH and rewrites its section of docs/BENCHMARKS.md. May use every other bench
 * package; the server's load step runs by class name with store-server's class path, never
 * imported.
 */
package dev.nepenthe.bench.suite;
