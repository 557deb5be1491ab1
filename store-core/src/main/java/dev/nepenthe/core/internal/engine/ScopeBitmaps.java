package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.internal.record.RecordAccess;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.roaringbitmap.RoaringBitmap;

/**
 * Each tenant's and each subject's live ordinals, in two copies: the writer's own (changed only
 * under the collection's writer mutex) and immutable copies that lock-free reads see, published
 * with the write's stamp in a sequence lock so that a search knows which writes the views it read
 * already hold ({@link #publishedAsOf}). Also the tenant and subject strings the records share.
 */
final class ScopeBitmaps {
    private record SubjectKey(String tenant, String subject) {}

    // ---- published for lock-free reads (written only under the writer mutex) --------------
    private final ConcurrentHashMap<String, RoaringBitmap> tenantView = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<SubjectKey, RoaringBitmap> subjectView =
            new ConcurrentHashMap<>();

    /** The stamp of the last write whose effects are all published. */
    private volatile long publishedStamp;

    /**
     * Odd while a publish changes the views and the stamp ({@link #beginPublish} to {@link
     * #endPublish}), even between: a reader that reads the same even value before and after its
     * reads of them read them as of one publish.
     */
    private volatile long publishing;

    // ---- the writer's own state (under the writer mutex) -----------------------------------
    private final Map<String, RoaringBitmap> byTenant = new HashMap<>();
    private final Map<SubjectKey, RoaringBitmap> bySubject = new HashMap<>();

    /** The tenant and subject strings the records share, by themselves; see {@link #canonical}. */
    private final Map<String, String> tenantNames = new HashMap<>();

    private final Map<SubjectKey, SubjectKey> subjectNames = new HashMap<>();
    private final Set<String> touchedTenants = new HashSet<>();
    private final Set<SubjectKey> touchedSubjects = new HashSet<>();

    /**
     * The record without its vector, text and metadata (see {@link RecordAccess#catalogued}),
     * holding the tenant and subject strings the bitmaps' keys hold (decoded records each bring
     * copies of their own). The keys go when their last record does, so a forgotten subject's name
     * is not kept.
     */
    VectorRecord canonical(VectorRecord r) {
        String tenant = tenantNames.computeIfAbsent(r.tenant(), t -> t);
        String subject = null;
        if (r.subject() != null) {
            subject =
                    subjectNames
                            .computeIfAbsent(new SubjectKey(tenant, r.subject()), k -> k)
                            .subject();
        }
        return RecordAccess.catalogued(r, tenant, subject);
    }

    /** Adds an ordinal to its tenant's and subject's (when not null) bitmaps. Writer only. */
    void add(int ord, String tenant, String subject) {
        byTenant.computeIfAbsent(tenant, t -> new RoaringBitmap()).add(ord);
        touchedTenants.add(tenant);
        if (subject != null) {
            SubjectKey key = new SubjectKey(tenant, subject);
            bySubject.computeIfAbsent(key, s -> new RoaringBitmap()).add(ord);
            touchedSubjects.add(key);
        }
    }

    /** Takes an ordinal out of its tenant's and subject's bitmaps. Writer only. */
    void remove(int ord, String tenant, String subject) {
        removeFrom(byTenant, tenant, ord);
        touchedTenants.add(tenant);
        if (!byTenant.containsKey(tenant)) {
            tenantNames.remove(tenant);
        }
        if (subject != null) {
            SubjectKey key = new SubjectKey(tenant, subject);
            removeFrom(bySubject, key, ord);
            touchedSubjects.add(key);
            if (!bySubject.containsKey(key)) {
                subjectNames.remove(key);
            }
        }
    }

    /** Takes {@code ord} out of the bitmap at {@code key}, dropping the bitmap when it empties. */
    static <K> void removeFrom(Map<K, RoaringBitmap> map, K key, int ord) {
        RoaringBitmap b = map.get(key);
        if (b != null) {
            b.remove(ord);
            if (b.isEmpty()) {
                map.remove(key);
            }
        }
    }

    /** A tenant's live ordinals (the writer's bitmap: do not keep or change it), or null. */
    RoaringBitmap tenantOrdinals(String tenant) {
        return byTenant.get(tenant);
    }

    /** A subject's live ordinals in a tenant (the writer's bitmap), or null. */
    RoaringBitmap subjectOrdinals(String tenant, String subject) {
        return bySubject.get(new SubjectKey(tenant, subject));
    }

    /** Starts a publish: readers wait until {@link #endPublish}. Writer only. */
    // Only the writer changes publishing, under its mutex: its increments cannot race.
    @SuppressWarnings("NonAtomicVolatileUpdate")
    void beginPublish() {
        publishing = publishing + 1; // odd
    }

    /** Publishes the bitmaps the writes since the last publish changed (immutable copies). */
    void publishViews() {
        for (String t : touchedTenants) {
            RoaringBitmap b = byTenant.get(t);
            if (b == null) {
                tenantView.remove(t);
            } else {
                tenantView.put(t, b.clone());
            }
        }
        for (SubjectKey s : touchedSubjects) {
            RoaringBitmap b = bySubject.get(s);
            if (b == null) {
                subjectView.remove(s);
            } else {
                subjectView.put(s, b.clone());
            }
        }
        touchedTenants.clear();
        touchedSubjects.clear();
    }

    /** Ends a publish with its stamp. */
    // Only the writer changes publishing, under its mutex: its increments cannot race.
    @SuppressWarnings("NonAtomicVolatileUpdate")
    void endPublish(long stamp) {
        publishedStamp = stamp;
        publishing = publishing + 1; // even again: the views and the stamp agree
    }

    /** The stamp of the last write whose effects are all published. */
    long publishedStamp() {
        return publishedStamp;
    }

    /** See {@link RecordCatalogue#publishedAsOf}. */
    // The yield is a back-off for a writer descheduled mid-publish, not a scheduling guarantee.
    @SuppressWarnings("ThreadPriorityCheck")
    RecordCatalogue.PublishedViews publishedAsOf(String tenant, String subject) {
        for (int spins = 0; ; spins++) {
            long before = publishing;
            if ((before & 1) == 0) {
                RoaringBitmap t = tenantView.get(tenant);
                RoaringBitmap s =
                        subject == null ? null : subjectView.get(new SubjectKey(tenant, subject));
                int tenants = tenantView.size();
                long stamp = publishedStamp;
                if (publishing == before) {
                    return new RecordCatalogue.PublishedViews(stamp, t, s, tenants);
                }
            }
            if (spins < 64) {
                Thread.onSpinWait();
            } else {
                Thread.yield(); // the writer may have been descheduled mid-publish
            }
        }
    }

    /** A tenant's live ordinals as last published (immutable), or null. */
    RoaringBitmap publishedTenant(String tenant) {
        return tenantView.get(tenant);
    }

    /** The tenants with live records, as last published (a copy). */
    Set<String> publishedTenants() {
        return Set.copyOf(tenantView.keySet());
    }

    /** How many ordinals the writer's tenant bitmaps hold together. */
    long tenantOrdinalCount() {
        long bits = 0;
        for (RoaringBitmap b : byTenant.values()) {
            bits += b.getCardinality();
        }
        return bits;
    }

    /** Whether what reads see equals what the writer holds (no write may be in flight). */
    boolean publishedAgree() {
        return tenantView.equals(byTenant) && subjectView.equals(bySubject);
    }

    /** How many tenants have live records. */
    int tenants() {
        return byTenant.size();
    }
}
