/**
 * Fixtures for tests and benchmarks: seeded synthetic data sets, replayable seeds and folder copies
 * for crash images. JDK only, so that store-core's own tests can use them (this module sits below
 * store-core).
 */
package dev.nepenthe.testing;
