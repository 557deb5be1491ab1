/**
 * The {@code nepenthe cluster} command line: {@code node} runs one replica in this process, {@code
 * up} runs a local group of replicas as child processes on loopback, and {@code demo} shows a
 * forget that waits for a killed replica and seals with every member's attestation once it is back.
 * Not API.
 */
package dev.nepenthe.cluster.cli;
