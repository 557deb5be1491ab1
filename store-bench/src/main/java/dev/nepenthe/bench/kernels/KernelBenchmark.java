package dev.nepenthe.bench.kernels;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The settings every kernel benchmark shares, in one place: average time in nanoseconds, short
 * iterations, one fork with the Vector API module and native access. JMH reads these class-level
 * annotations from the superclass, so a benchmark only extends this class; command-line options
 * still override them.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {
            "--add-modules=jdk.incubator.vector",
            "--enable-native-access=ALL-UNNAMED"
        })
public abstract class KernelBenchmark {}
