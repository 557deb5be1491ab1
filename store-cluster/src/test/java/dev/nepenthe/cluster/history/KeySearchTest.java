package dev.nepenthe.cluster.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The checker is the oracle of the history test, so it is checked on histories small enough to
 * judge by hand: each one it must accept, and each anomaly a replicated store could show (a stale
 * read, a lost write, a resurrection, a read after a forget, a wrong delete count) it must refuse.
 */
final class KeySearchTest {

    private static final String KEY = "k01";

    private final List<Op> ops = new ArrayList<>();

    private Op add(Op.Kind kind, long write, Op.Outcome outcome, long seen, long inv, long ret) {
        Op o =
                new Op(
                        ops.size(),
                        0,
                        0,
                        kind,
                        kind == Op.Kind.FORGET ? null : KEY,
                        1,
                        write,
                        outcome,
                        seen,
                        inv,
                        outcome == Op.Outcome.UNKNOWN ? Op.NEVER : ret,
                        "");
        ops.add(o);
        return o;
    }

    private void upsert(long w, long inv, long ret) {
        add(Op.Kind.UPSERT, w, Op.Outcome.OK, -1, inv, ret);
    }

    private void refused(long w, long inv, long ret) {
        add(Op.Kind.UPSERT, w, Op.Outcome.REFUSED, -1, inv, ret);
    }

    private void unknownUpsert(long w, long inv) {
        add(Op.Kind.UPSERT, w, Op.Outcome.UNKNOWN, -1, inv, 0);
    }

    private void get(long seen, long inv, long ret) {
        add(Op.Kind.GET, -1, Op.Outcome.OK, seen, inv, ret);
    }

    private void delete(long count, long inv, long ret) {
        add(Op.Kind.DELETE, -1, Op.Outcome.OK, count, inv, ret);
    }

    private void forget(long inv, long ret) {
        add(Op.Kind.FORGET, -1, Op.Outcome.OK, -1, inv, ret);
    }

    private boolean linearizable() {
        return new KeySearch(KEY, ops, ops, 10_000).linearizable();
    }

    @Test
    void sequentialWritesAndReadsAreAccepted() {
        get(Op.NOT_FOUND, 0, 1);
        upsert(7, 2, 3);
        get(7, 4, 5);
        delete(1, 6, 7);
        delete(0, 8, 9);
        get(Op.NOT_FOUND, 10, 11);
        assertThat(linearizable()).isTrue();
    }

    @Test
    void aReadConcurrentWithAWriteMaySeeEitherValue() {
        upsert(1, 0, 1);
        upsert(2, 2, 10);
        get(1, 3, 4);
        get(2, 5, 6);
        assertThat(linearizable()).isTrue();
    }

    @Test
    void aReadCannotGoBackToAnOlderValue() {
        upsert(1, 0, 1);
        upsert(2, 2, 10);
        get(2, 3, 4);
        get(1, 5, 6);
        assertThat(linearizable()).isFalse();
    }

    @Test
    void aStaleReadAfterAnAcknowledgedWriteIsRefused() {
        upsert(1, 0, 1);
        upsert(2, 2, 3);
        get(1, 4, 5);
        KeySearch s = new KeySearch(KEY, ops, ops, 10_000);
        assertThat(s.linearizable()).isFalse();
        assertThat(s.explain(0)).contains("GET k01").contains("saw w=1");
    }

    @Test
    void aReadOfAValueNeverWrittenIsRefused() {
        upsert(1, 0, 1);
        get(9, 2, 3);
        assertThat(linearizable()).isFalse();
    }

    @Test
    void aWriteOfUnknownOutcomeMayOrMayNotHaveHappened() {
        upsert(1, 0, 1);
        unknownUpsert(2, 2);
        get(1, 3, 4);
        get(2, 5, 6);
        assertThat(linearizable()).isTrue();
        ops.clear();
        upsert(1, 0, 1);
        unknownUpsert(2, 2);
        get(1, 3, 4);
        assertThat(linearizable()).isTrue();
    }

    @Test
    void aWriteOfUnknownOutcomeTakesEffectOnlyOnce() {
        upsert(1, 0, 1);
        unknownUpsert(2, 2);
        get(2, 3, 4);
        upsert(3, 5, 6);
        get(3, 7, 8);
        get(2, 9, 10);
        assertThat(linearizable()).isFalse();
    }

    @Test
    void aWriteOfUnknownOutcomeCannotTakeEffectBeforeItWasMade() {
        get(5, 0, 1);
        unknownUpsert(5, 2);
        assertThat(linearizable()).isFalse();
    }

    @Test
    void manyAnswerlessWritesDoNotExplodeTheSearch() {
        upsert(1, 0, 1);
        for (int i = 0; i < 200; i++) {
            unknownUpsert(1000 + i, 2 + i);
            add(Op.Kind.DELETE, -1, Op.Outcome.UNKNOWN, -1, 3 + i, 0);
        }
        get(1, 500, 501);
        assertThat(linearizable()).isTrue();
        // The same history with a read no order explains: the search must end, and say no.
        ops.remove(ops.size() - 1);
        get(Op.NOT_FOUND, 500, 501);
        upsert(5, 502, 503);
        get(6, 504, 505);
        assertThat(new KeySearch(KEY, ops, ops, 1_000_000).linearizable()).isFalse();
    }

    @Test
    void aDeleteCountsWhatItRemoved() {
        upsert(1, 0, 1);
        delete(0, 2, 3);
        assertThat(linearizable()).isFalse();
        ops.clear();
        delete(1, 0, 1);
        assertThat(linearizable()).isFalse();
    }

    @Test
    void afterAForgetADeleteMayCountTheBlockedRecordButNoMore() {
        upsert(1, 0, 1);
        forget(2, 3);
        delete(1, 4, 5);
        get(Op.NOT_FOUND, 6, 7);
        assertThat(linearizable()).isTrue();
        ops.clear();
        upsert(1, 0, 1);
        forget(2, 3);
        delete(2, 4, 5);
        assertThat(linearizable()).isFalse();
    }

    @Test
    void aDeletedRecordDoesNotComeBack() {
        upsert(1, 0, 1);
        delete(1, 2, 3);
        get(1, 4, 5);
        assertThat(linearizable()).isFalse();
    }

    @Test
    void afterAForgetReturnedNoReadSeesTheRecordAndNoUpsertIsTaken() {
        upsert(1, 0, 1);
        forget(2, 3);
        get(Op.NOT_FOUND, 4, 5);
        refused(2, 6, 7);
        delete(0, 8, 9);
        assertThat(linearizable()).isTrue();

        ops.clear();
        upsert(1, 0, 1);
        forget(2, 3);
        get(1, 4, 5);
        assertThat(linearizable()).as("a read after the forget").isFalse();

        ops.clear();
        upsert(1, 0, 1);
        forget(2, 3);
        upsert(2, 4, 5);
        assertThat(linearizable()).as("an upsert after the forget").isFalse();
    }

    @Test
    void anUpsertIsRefusedOnlyOnceTheSubjectIsForgotten() {
        refused(1, 0, 1);
        assertThat(linearizable()).isFalse();
        ops.clear();
        refused(1, 0, 5);
        forget(1, 2);
        assertThat(linearizable()).as("a forget concurrent with the refused upsert").isTrue();
    }

    @Test
    void finalStatesAreThoseSomeOrderEndsIn() {
        upsert(1, 0, 1);
        unknownUpsert(2, 2);
        add(Op.Kind.DELETE, -1, Op.Outcome.UNKNOWN, -1, 3, 0);
        Op seen = add(Op.Kind.GET, -1, Op.Outcome.OK, 2, 100, 101);
        List<Op> before = ops.subList(0, 3);
        Set<Long> finals = new KeySearch(KEY, before, ops, 10_000).finalStates();
        // No read saw w=1: the model folds it into "a write no read saw".
        assertThat(finals)
                .containsExactlyInAnyOrder(
                        KeyModel.pack(KeyModel.UNSEEN, false),
                        KeyModel.pack(2, false),
                        KeyModel.pack(KeyModel.EMPTY, false));
        assertThat(finals).anyMatch(s -> KeyModel.step(seen, -1, s) != KeyModel.INVALID);
    }

    @Test
    void aSearchOverItsBudgetSaysSo() {
        for (int i = 0; i < 40; i++) {
            upsert(i, 0, 1000);
        }
        get(7, 2000, 2001);
        get(8, 2002, 2003);
        assertThatThrownBy(() -> new KeySearch(KEY, ops, ops, 1_000).linearizable())
                .isInstanceOf(KeySearch.Exploded.class)
                .hasMessageContaining("more than 1000 configurations");
    }
}
