/**
 * The embedded store's public API: {@link dev.nepenthe.core.Nepenthe} opens a store on a folder and
 * {@link dev.nepenthe.core.VectorCollection} stores and searches records; beside them the specs,
 * options, filters, reports and exceptions a caller uses. Its signatures name only the API packages
 * and the JDK (ArchitectureTest); behind them it delegates to the {@code internal} packages.
 */
package dev.nepenthe.core;
