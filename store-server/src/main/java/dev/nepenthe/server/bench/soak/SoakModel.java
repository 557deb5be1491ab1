package dev.nepenthe.server.bench.soak;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * What the server must hold, by the harness's account: every write and delete it acknowledged,
 * every subject whose forget it acknowledged. A call whose outcome is unknown (it failed
 * UNAVAILABLE while the server went down, so it may or may not have been applied) leaves the
 * record's state open between the acknowledged one and the one it asked for; the next check reads
 * what the server holds and settles it (the process that could still apply it is gone).
 *
 * <p>Each record has at most one call in flight, and a subject being forgotten has none: the
 * forgetter retires it, waits for its calls to finish, and only then forgets it, so the model never
 * has to guess an order. Records carry their version in metadata ({@code v}) and a vector that is a
 * function of (tenant, id, version), so what the server returns can be checked exactly. All methods
 * are synchronized: the rates are bounded and small.
 */
final class SoakModel {

    /** The state of a record that is not stored (never written, or deleted). */
    static final int ABSENT = -1;

    /** Most records one subject holds; past it, writes replace. */
    static final int RECORDS_PER_SUBJECT = 12;

    /** Most active subjects a tenant keeps before it stops adding new ones. */
    static final int ACTIVE_SUBJECTS = 60;

    enum SubjectState {
        ACTIVE,
        RETIRING,
        FORGOTTEN,
        ABANDONED
    }

    /** A person the records are about; ids are unique within the tenant. */
    static final class Subject {
        final String tenant;
        final String name;
        final List<Entry> entries = new ArrayList<>();
        SubjectState state = SubjectState.ACTIVE;
        int inflight;
        long forgottenAt;

        Subject(String tenant, String name) {
            this.tenant = tenant;
            this.name = name;
        }
    }

    /** One record id: its acknowledged state, and the states an unsettled call may have left. */
    static final class Entry {
        final Subject subject;
        final String id;
        int nextVersion;
        int acked = ABSENT;
        boolean deleteAcked;
        final Set<Integer> possible = new HashSet<>();
        boolean busy;

        Entry(Subject subject, String id) {
            this.subject = subject;
            this.id = id;
        }
    }

    /** A call about to go out: the records (and the versions) it writes, or deletes. */
    record Call(Subject subject, List<Entry> entries, List<Integer> versions) {}

    /** A forgotten record: every version it may have held when its subject was forgotten. */
    record Forgotten(String tenant, String id, String subject, List<Integer> versions) {}

    /** What a check found for one record. */
    enum Verdict {
        OK,
        LOST,
        RESURRECTED
    }

    private final long seed;
    private final int dim;
    private final List<String> tenants;
    private final Map<String, List<Subject>> subjects = new LinkedHashMap<>();
    private final Map<String, Integer> nextSubject = new HashMap<>();
    private final List<Forgotten> forgotten = new ArrayList<>();
    private long clock;
    private long ackedWrites;

    SoakModel(long seed, int dim, List<String> tenants) {
        this.seed = seed;
        this.dim = dim;
        this.tenants = List.copyOf(tenants);
        for (String t : tenants) {
            subjects.put(t, new ArrayList<>());
            nextSubject.put(t, 0);
        }
    }

    List<String> tenants() {
        return tenants;
    }

    /**
     * Plans an upsert of 1 to 4 records of one active subject: new ids while the subject has room,
     * otherwise (and for about a third of them anyway) replacements of its existing ids. Returns
     * null when every candidate record is busy.
     */
    synchronized Call planWrite(SplittableRandom rnd) {
        String tenant = tenants.get(rnd.nextInt(tenants.size()));
        List<Subject> all = subjects.get(tenant);
        List<Subject> active = all.stream().filter(s -> s.state == SubjectState.ACTIVE).toList();
        Subject s;
        if (active.size() < ACTIVE_SUBJECTS && (active.isEmpty() || rnd.nextInt(8) == 0)) {
            int n = nextSubject.merge(tenant, 1, Integer::sum) - 1;
            s = new Subject(tenant, "s" + n);
            all.add(s);
        } else {
            s = active.get(rnd.nextInt(active.size()));
        }
        int want = 1 + rnd.nextInt(4);
        List<Entry> chosen = new ArrayList<>();
        for (int i = 0; i < want; i++) {
            boolean replace =
                    s.entries.size() >= RECORDS_PER_SUBJECT
                            || (!s.entries.isEmpty() && rnd.nextInt(3) == 0);
            Entry e;
            if (replace) {
                e = s.entries.get(rnd.nextInt(s.entries.size()));
                if (e.busy || chosen.contains(e)) {
                    continue;
                }
            } else {
                e = new Entry(s, s.name + "-r" + s.entries.size());
                s.entries.add(e);
            }
            chosen.add(e);
        }
        if (chosen.isEmpty()) {
            return null;
        }
        List<Integer> versions = new ArrayList<>();
        for (Entry e : chosen) {
            e.busy = true;
            versions.add(e.nextVersion++);
        }
        s.inflight++;
        return new Call(s, chosen, versions);
    }

    /**
     * Plans a delete of one to three stored records of one active subject; null if there are none
     * free.
     */
    synchronized Call planDelete(SplittableRandom rnd) {
        String tenant = tenants.get(rnd.nextInt(tenants.size()));
        List<Subject> active =
                subjects.get(tenant).stream()
                        .filter(
                                s ->
                                        s.state == SubjectState.ACTIVE
                                                && s.entries.stream()
                                                        .anyMatch(
                                                                e -> !e.busy && e.acked != ABSENT))
                        .toList();
        if (active.isEmpty()) {
            return null;
        }
        Subject s = active.get(rnd.nextInt(active.size()));
        List<Entry> free =
                new ArrayList<>(
                        s.entries.stream().filter(e -> !e.busy && e.acked != ABSENT).toList());
        List<Entry> chosen = new ArrayList<>();
        for (int i = 0, n = 1 + rnd.nextInt(3); i < n && !free.isEmpty(); i++) {
            chosen.add(free.remove(rnd.nextInt(free.size())));
        }
        chosen.forEach(e -> e.busy = true);
        s.inflight++;
        return new Call(s, chosen, null);
    }

    /** The call was acknowledged: its records hold what it asked for. */
    synchronized void acknowledged(Call c) {
        for (int i = 0; i < c.entries().size(); i++) {
            Entry e = c.entries().get(i);
            e.acked = c.versions() == null ? ABSENT : c.versions().get(i);
            e.deleteAcked = c.versions() == null;
            e.possible.clear();
        }
        if (c.versions() != null) {
            ackedWrites++;
        }
        finish(c);
    }

    /** The call's outcome is unknown: each record may hold what it asked for, or what it held. */
    synchronized void unsettled(Call c) {
        for (int i = 0; i < c.entries().size(); i++) {
            c.entries().get(i).possible.add(c.versions() == null ? ABSENT : c.versions().get(i));
        }
        finish(c);
    }

    /** The call was refused: nothing changed. */
    synchronized void refused(Call c) {
        finish(c);
    }

    private void finish(Call c) {
        c.entries().forEach(e -> e.busy = false);
        c.subject().inflight--;
        notifyAll();
    }

    synchronized long ackedWrites() {
        return ackedWrites;
    }

    /** Takes an active subject with records out of the workload; null if there is none. */
    synchronized Subject retire(String tenant, SplittableRandom rnd) {
        List<Subject> candidates =
                subjects.get(tenant).stream()
                        .filter(s -> s.state == SubjectState.ACTIVE && !s.entries.isEmpty())
                        .toList();
        if (candidates.isEmpty()) {
            return null;
        }
        Subject s = candidates.get(rnd.nextInt(candidates.size()));
        s.state = SubjectState.RETIRING;
        return s;
    }

    /** Waits until no call on the subject is in flight (every call ends within its deadline). */
    synchronized void awaitIdle(Subject s) throws InterruptedException {
        while (s.inflight > 0) {
            wait();
        }
    }

    /** Its forget was acknowledged (BLOCKED): none of its records may be served from now on. */
    synchronized void forgotten(Subject s) {
        s.state = SubjectState.FORGOTTEN;
        s.forgottenAt = ++clock;
        for (Entry e : s.entries) {
            List<Integer> versions = new ArrayList<>(e.possible);
            if (e.acked != ABSENT) {
                versions.add(e.acked);
            }
            versions.removeIf(v -> v == ABSENT);
            if (!versions.isEmpty() || e.nextVersion > 0) {
                forgotten.add(new Forgotten(s.tenant, e.id, s.name, List.copyOf(versions)));
            }
        }
    }

    /** Its forget could not be settled (an error, not an outage): the checks leave it alone. */
    synchronized void abandoned(Subject s) {
        s.state = SubjectState.ABANDONED;
    }

    /**
     * The forget clock now: a search started at this time must not return what was forgotten at or
     * before it.
     */
    synchronized long now() {
        return clock;
    }

    /** Whether a search in {@code tenant} started at {@code startedAt} may not return this hit. */
    synchronized boolean forgottenBefore(String tenant, String subject, long startedAt) {
        for (Subject s : subjects.get(tenant)) {
            if (s.name.equals(subject)) {
                return s.state == SubjectState.FORGOTTEN && s.forgottenAt <= startedAt;
            }
        }
        return false;
    }

    /**
     * Every record of the subjects still in the workload (active), for a check with the workload
     * paused.
     */
    synchronized List<Entry> live() {
        List<Entry> out = new ArrayList<>();
        for (List<Subject> list : subjects.values()) {
            for (Subject s : list) {
                if (s.state == SubjectState.ACTIVE) {
                    out.addAll(s.entries);
                }
            }
        }
        return out;
    }

    synchronized List<Forgotten> forgottenRecords() {
        return List.copyOf(forgotten);
    }

    /** The forgotten subjects, as tenant and name. */
    synchronized List<Subject> forgottenSubjects() {
        List<Subject> out = new ArrayList<>();
        subjects.values()
                .forEach(
                        l ->
                                l.stream()
                                        .filter(s -> s.state == SubjectState.FORGOTTEN)
                                        .forEach(out::add));
        return out;
    }

    /**
     * What the server holds for {@code e} (a version, or {@link #ABSENT}) against what it must
     * hold; the record's state is settled to what was read either way, so that a loss is counted
     * once, at the check that first sees it.
     */
    synchronized Verdict observe(Entry e, int observed) {
        Verdict v;
        if (observed == e.acked || e.possible.contains(observed)) {
            v = Verdict.OK;
        } else if (e.acked != ABSENT) {
            v = Verdict.LOST;
        } else {
            v = Verdict.RESURRECTED;
        }
        e.acked = observed;
        e.possible.clear();
        return v;
    }

    /**
     * The vector of one version of a record: near its subject's centre, so that a subject's records
     * are each other's neighbours and a search by a forgotten vector lands among them.
     */
    float[] vector(String tenant, String id, String subject, int version) {
        SplittableRandom centre =
                new SplittableRandom(
                        seed ^ (tenant + "/" + subject).hashCode() * 0x9E3779B97F4A7C15L);
        SplittableRandom noise =
                new SplittableRandom(
                        seed
                                ^ ((tenant + "/" + id).hashCode() * 31L + version)
                                        * 0xBF58476D1CE4E5B9L);
        float[] v = new float[dim];
        double norm = 0;
        for (int i = 0; i < dim; i++) {
            v[i] = (float) (centre.nextDouble(-1, 1) + 0.4 * noise.nextDouble(-1, 1));
            norm += v[i] * v[i];
        }
        float inv = (float) (1 / Math.sqrt(norm));
        for (int i = 0; i < dim; i++) {
            v[i] *= inv;
        }
        return v;
    }
}
