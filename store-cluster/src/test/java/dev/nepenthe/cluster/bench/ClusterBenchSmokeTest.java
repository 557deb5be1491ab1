package dev.nepenthe.cluster.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.data.Percentage.withPercentage;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The harness end to end at tiny sizes (d=32: at d=8, random vectors lie so close together that
 * each replica's probe holds a forget in NEEDS_REVIEW for survivors resembling what it forgot), in
 * this JVM: every table is there with the rows its setups give, each row's median lies between its
 * min and max over the rounds asked for, throughputs are positive, every forget sealed, and no
 * temporary folder is left behind.
 */
final class ClusterBenchSmokeTest {

    private static final List<String> ARGS =
            List.of(
                    "n=300",
                    "dim=32",
                    "batch=64",
                    "queries=100",
                    "warmup=20",
                    "reps=2",
                    "forgets=2",
                    "rounds=1",
                    "catchup=300",
                    "seed=11");

    /** One table row's cells after the label columns: median, min, max, rounds. */
    private static double[] row(String out, String start, int labels) {
        String line =
                out.lines()
                        .filter(l -> l.startsWith(start))
                        .findFirst()
                        .orElseThrow(() -> new AssertionError("no row '" + start + "' in\n" + out));
        String[] cells = line.split("\\|", -1);
        double[] v =
                Arrays.stream(cells, 1 + labels, cells.length - 1)
                        .mapToDouble(c -> Double.parseDouble(c.strip()))
                        .toArray();
        assertThat(v).as(line).hasSize(4);
        assertThat(v[0]).as("median within min and max: " + line).isBetween(v[1], v[2]);
        assertThat(v[1]).as("min: " + line).isGreaterThan(0);
        return v;
    }

    private static List<Path> leftovers() throws Exception {
        try (Stream<Path> s = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            return s.filter(p -> p.getFileName().toString().startsWith("nepenthe-cluster-bench"))
                    .toList();
        }
    }

    @Test
    @Timeout(600)
    void everyTableHasPlausibleFigures() throws Exception {
        List<Path> before = leftovers();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ClusterBench.run(ARGS, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String out = bytes.toString(StandardCharsets.UTF_8);
        System.out.println(out);

        assertThat(out)
                .contains("all replicas share the machine's")
                .contains("./nepenthe bench cluster " + String.join(" ", ARGS))
                .contains("seed 11")
                .containsPattern("Load average before [0-9.]+ [0-9.]+ [0-9.]+, after [0-9.]+");
        for (String setup :
                List.of("| single server (no Raft) |", "| 1 replica (a Raft group of one) |")) {
            assertThat(row(out, setup, 1)[3]).as("ingest rounds").isEqualTo(2);
        }
        assertThat(row(out, "| 3 replicas |", 1)[3]).isEqualTo(2);
        assertThat(row(out, "| single server (no Raft) | local |", 2)[3]).isEqualTo(2);
        for (String reads : List.of("linearizable", "stale")) {
            row(out, "| 1 replica (a Raft group of one) | " + reads + " |", 2);
            row(out, "| 3 replicas, spread over all | " + reads + " |", 2);
        }

        double[] returned = row(out, "| forget() returns", 1);
        double[] sealed = row(out, "| settled: every replica attested", 1);
        assertThat(returned[3]).isEqualTo(2);
        assertThat(sealed[0]).as("SEALED comes after forget() returns").isGreaterThan(returned[1]);
        assertThat(out).contains("settled states: SEALED=2.");

        double[] ready = row(out, "| another replica is leader and ready", 1);
        double[] write = row(out, "| first write through a surviving replica acknowledged", 1);
        assertThat(ready[3]).isEqualTo(1);
        assertThat(write[3]).isEqualTo(1);
        row(out, "| the leader's Replica.close() returns", 1);

        assertThat(out).contains("#### Catch-up of a replica 300 records behind");
        double[] catchUp = row(out, "| applied index reaches the leader's commit index", 1);
        double[] rate = row(out, "| records caught up per second", 1);
        assertThat(rate[0]).isCloseTo(300 / (catchUp[0] / 1000), withPercentage(5));
        row(out, "| Replica.start returns", 1);
        double[] first = row(out, "| first entry written while it was down applied", 1);
        assertThat(first[0]).isLessThanOrEqualTo(catchUp[0]);

        assertThat(out).contains("#### A fourth replica joins by a copy of the leader's store");
        double[] joinStart = row(out, "| the new replica's Replica.start returns", 1);
        double[] added = row(out, "| AddReplica returns", 1);
        double[] caughtUp = row(out, "| caught up: it applied up to the leader's commit index", 1);
        assertThat(added[0]).isGreaterThanOrEqualTo(joinStart[0]);
        assertThat(caughtUp[0]).isGreaterThanOrEqualTo(added[0]);

        assertThat(leftovers()).as("temporary folders after the run").isEqualTo(before);
    }

    @Test
    void aBadParameterIsRefusedWithWhatWasExpected() {
        assertThatThrownBy(() -> ClusterBench.run(List.of("n=lots"), System.out))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("n: expected a positive whole number, got 'lots'");
        assertThatThrownBy(() -> ClusterBench.run(List.of("replicas=5"), System.out))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("bench cluster: expected key=value with a key among [n,");
        assertThatThrownBy(() -> ClusterBench.run(List.of("n=100", "forgets=10"), System.out))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("forgets: expected at most one per 20 records (5 for n=100), got 10");
    }
}
