/* An adaptive mesh refined the way block-structured AMR mini-apps do (miniAMR's scheme, in 2-D): the
 * problem grows with the ranks (weak scaling), objects move through the domain and the mesh refines
 * around them, blocks move between ranks to balance the load, and so every rank's neighbours change at
 * every refinement.
 *
 * The mesh. The ranks form a grid of px x py ranks (the most square factorisation of the rank count),
 * and the domain is ROOTS x ROOTS root blocks per rank of it, not periodic. A root block is 4 fine
 * cells wide; it refines up to twice (blocks 4, 2 or 1 fine cells wide). Blocks are kept in Morton
 * order and partitioned into contiguous runs of equal block counts. Every rank knows the whole mesh
 * (computed alike on every rank), but only a block's owner holds its data.
 *
 * A timestep, as miniAMR's stages: a halo exchange direction by direction (x, then y). For each
 * direction every rank finds its partners (ranks owning a block across a face of one of its blocks in
 * that direction), in increasing rank order, posts one MPI_Irecv per partner, then one MPI_Isend per
 * partner carrying all its faces' data (tag: the direction; 16 bytes per fine cell of a face, so a
 * face to a finer or coarser block carries other sizes), completes the receives with a loop of
 * MPI_Waitany, unpacking each message as it comes, and the sends with MPI_Waitall. Then the owner
 * updates its blocks, and an MPI_Allreduce sums a checksum.
 *
 * A refinement, every REFINE_EVERY timesteps. Two circles move across the domain; a block the edge of
 * a circle crosses wants one level more, a block no edge crosses one level less (four siblings coarsen
 * only together and only where one rank owns all four). Neighbouring blocks may differ by one level
 * at most, which the ranks settle in rounds: each round every rank sends each of its neighbour ranks
 * the levels its blocks want (MPI_Irecv, MPI_Isend per neighbour, MPI_Waitall), raises what its own
 * blocks want from what their neighbours want, and an MPI_Allreduce counts the changes, until a
 * round changes nothing (how many rounds differs between refinements). An MPI_Allgatherv gives every
 * rank what every block wants; blocks split and coarsen; then the load balance: an MPI_Alltoall of how
 * many blocks each rank sends each other rank, one MPI_Irecv and one MPI_Isend per partner with all
 * the blocks it moves (level, position, data), an MPI_Waitall, and an MPI_Allreduce of the block count,
 * a checksum and the inconsistencies each rank found. An MPI_Allreduce of the halo messages ends the
 * job.
 *
 * Exercises: peers, partner counts and message sizes that differ per rank, per timestep and with the
 * rank count; loops of rounds whose count changes between refinements; blocks that move between
 * ranks. The output holds only sums of the data and counts of the mesh, which timing cannot change.
 *
 * Usage: amr_moving [TIMESTEPS [REFINE_EVERY]]    (defaults 24, 4; any rank count) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logged_start.h"

enum { ROOTS = 2, MAX_LEVEL = 2, ROOT_CELLS = 1 << MAX_LEVEL }; /* root blocks per rank and side; fine cells per root */
enum { BLOCK_WORDS = 4 };                                     /* long longs of data per block */
enum { HALO_WORDS_PER_CELL = 2 };
enum { HEADER_WORDS = 3, MIGRATE_WORDS = HEADER_WORDS + BLOCK_WORDS }; /* level, x, y, data */
enum { WEST, EAST, SOUTH, NORTH, SIDES };
enum { DIRECTIONS = 2 };                                      /* x: WEST and EAST; y: SOUTH and NORTH */
enum { TAG_LEVELS = 5, TAG_MIGRATE = 10 };
static const long long PRIME = 1000003;

typedef struct {
    int level, x, y; /* x, y in units of the block's own size */
    int owner;
    long long data[BLOCK_WORDS]; /* meaningful on the owner only */
} Block;

/* Data flows from block `src` to the block `dst` across `dst`'s side `side`, `cells` fine cells long. */
typedef struct {
    int src, dst, side, cells;
} Face;

typedef struct {
    int count;
    Block *blocks;
} Mesh;

/* The job's shape, fixed at the start. */
static int rank, size;
static int cells_x, cells_y; /* the domain in fine cells */
static int max_blocks;       /* every root block at the finest level */

/* One exchange partner: its rank, its message's words and where they start in the buffer. */
typedef struct {
    int peer, words, offset;
} Partner;

/* Partners found for one exchange (`peer_slot` maps a rank to its place in `partners`, -1 if none). */
typedef struct {
    int count;
    Partner *partners;
    int *peer_slot;
} PartnerList;

static void partners_init(PartnerList *list)
{
    list->count = 0;
    list->partners = malloc(size * sizeof *list->partners);
    list->peer_slot = malloc(size * sizeof *list->peer_slot);
    for (int r = 0; r < size; ++r)
        list->peer_slot[r] = -1;
}

static void partners_add(PartnerList *list, int peer, int words)
{
    if (list->peer_slot[peer] < 0) {
        list->peer_slot[peer] = list->count;
        list->partners[list->count++] = (Partner){peer, 0, 0};
    }
    list->partners[list->peer_slot[peer]].words += words;
}

static int by_peer(const void *a, const void *b)
{
    return ((const Partner *)a)->peer - ((const Partner *)b)->peer;
}

/* Sorts the partners by rank and lays their messages out one after the other; returns the words. */
static int partners_finish(PartnerList *list)
{
    qsort(list->partners, list->count, sizeof *list->partners, by_peer);
    int offset = 0;
    for (int k = 0; k < list->count; ++k) {
        list->peer_slot[list->partners[k].peer] = k;
        list->partners[k].offset = offset;
        offset += list->partners[k].words;
    }
    return offset;
}

static void partners_clear(PartnerList *list)
{
    for (int k = 0; k < list->count; ++k)
        list->peer_slot[list->partners[k].peer] = -1;
    list->count = 0;
}

/* Numerical Recipes' LCG and a mix, as in convergence.c: the same numbers on every platform. */
static uint32_t hash3(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t x = (a * 7919u + b * 104729u + c * 1299709u + 1u) * 1664525u + 1013904223u;
    x = (x ^ (x >> 16)) * 0x45d9f3bu;
    x = (x ^ (x >> 16)) * 0x45d9f3bu;
    return x ^ (x >> 16);
}

static int width(int level) /* in fine cells */
{
    return ROOT_CELLS >> level;
}

/* Morton key of a block's first fine cell: bits of x and y interleaved. */
static uint64_t morton(const Block *b)
{
    const uint64_t fx = (uint64_t)(b->x * width(b->level)), fy = (uint64_t)(b->y * width(b->level));
    uint64_t key = 0;
    for (int bit = 0; bit < 30; ++bit)
        key |= ((fx >> bit) & 1u) << (2 * bit) | ((fy >> bit) & 1u) << (2 * bit + 1);
    return key;
}

static int by_morton(const void *a, const void *b)
{
    const uint64_t ka = morton(a), kb = morton(b);
    return (ka > kb) - (ka < kb);
}

static int by_face(const void *a, const void *b)
{
    const Face *fa = a, *fb = b;
    if (fa->src != fb->src)
        return fa->src - fb->src;
    if (fa->dst != fb->dst)
        return fa->dst - fb->dst;
    return fa->side - fb->side;
}

/* Contiguous runs of equal block counts in Morton order, as a space-filling-curve balancer makes. */
static void partition(const Mesh *mesh, int *owner)
{
    for (int i = 0; i < mesh->count; ++i)
        owner[i] = (int)((long long)i * size / mesh->count);
}

/* Every face between two blocks inside the domain, sorted by (src, dst, side): the order both ends
 * pack and unpack in. */
static int find_faces(const Mesh *mesh, Face *faces)
{
    static int *cell_block;
    if (cell_block == NULL)
        cell_block = malloc((size_t)cells_x * cells_y * sizeof *cell_block);
    for (int i = 0; i < mesh->count; ++i) {
        const Block *b = &mesh->blocks[i];
        const int w = width(b->level);
        for (int dx = 0; dx < w; ++dx)
            for (int dy = 0; dy < w; ++dy)
                cell_block[(size_t)(b->y * w + dy) * cells_x + b->x * w + dx] = i;
    }
    int count = 0;
    for (int i = 0; i < mesh->count; ++i) {
        const Block *b = &mesh->blocks[i];
        const int w = width(b->level), fx = b->x * w, fy = b->y * w;
        for (int side = 0; side < SIDES; ++side) {
            int previous = -1;
            for (int k = 0; k < w; ++k) {
                const int cx = side == WEST ? fx - 1 : side == EAST ? fx + w : fx + k;
                const int cy = side == SOUTH ? fy - 1 : side == NORTH ? fy + w : fy + k;
                if (cx < 0 || cy < 0 || cx >= cells_x || cy >= cells_y)
                    break; /* the domain's edge */
                const int neighbor = cell_block[(size_t)cy * cells_x + cx];
                if (neighbor == previous) {
                    faces[count - 1].cells += 1;
                } else {
                    faces[count++] = (Face){neighbor, i, side, 1};
                    previous = neighbor;
                }
            }
        }
    }
    qsort(faces, count, sizeof *faces, by_face);
    return count;
}

/* What block `b` sends across a face onto side `side` of its neighbour. */
static void halo_words(const Block *b, int side, int words, long long *out)
{
    for (int i = 0; i < words; ++i)
        out[i] = (b->data[(i * 3 + side) % BLOCK_WORDS] + i) % PRIME;
}

static long long block_checksum(const Block *b)
{
    long long sum = 0;
    for (int j = 0; j < BLOCK_WORDS; ++j)
        sum += b->data[j] * (j + 1);
    return sum;
}

static int in_direction(const Face *face, int direction)
{
    return direction == 0 ? face->side == WEST || face->side == EAST : face->side == SOUTH || face->side == NORTH;
}

/* One direction of a timestep's halo exchange: adds what arrives (and what this rank's own blocks give
 * each other) to `halo`; returns the messages received. */
static int exchange_direction(const Mesh *mesh, const Face *faces, int face_count, int direction, long long *halo)
{
    static PartnerList receives, sends;
    static long long *recv_buffer, *send_buffer;
    static MPI_Request *requests;
    if (requests == NULL) {
        partners_init(&receives);
        partners_init(&sends);
        requests = malloc(2 * (size_t)size * sizeof *requests);
    }
    for (int f = 0; f < face_count; ++f) {
        const Face *face = &faces[f];
        const int from = mesh->blocks[face->src].owner, to = mesh->blocks[face->dst].owner;
        if (!in_direction(face, direction) || from == to)
            continue;
        if (to == rank)
            partners_add(&receives, from, face->cells * HALO_WORDS_PER_CELL);
        else if (from == rank)
            partners_add(&sends, to, face->cells * HALO_WORDS_PER_CELL);
    }
    const int recv_words = partners_finish(&receives), send_words = partners_finish(&sends);
    recv_buffer = realloc(recv_buffer, (recv_words + 1) * sizeof *recv_buffer);
    send_buffer = realloc(send_buffer, (send_words + 1) * sizeof *send_buffer);

    for (int k = 0; k < receives.count; ++k) {
        const Partner *p = &receives.partners[k];
        MPI_Irecv(recv_buffer + p->offset, p->words, MPI_LONG_LONG, p->peer, direction, MPI_COMM_WORLD, &requests[k]);
        log_recv("MPI_Irecv", p->words * (long long)sizeof(long long), p->peer, direction);
    }
    /* Pack in face order; the faces between this rank's own blocks are added at once. */
    int *packed = calloc(sends.count + 1, sizeof *packed);
    long long words_of_face[2 * ROOT_CELLS * HALO_WORDS_PER_CELL];
    for (int f = 0; f < face_count; ++f) {
        const Face *face = &faces[f];
        const Block *src = &mesh->blocks[face->src];
        const int to = mesh->blocks[face->dst].owner, words = face->cells * HALO_WORDS_PER_CELL;
        if (!in_direction(face, direction) || src->owner != rank)
            continue;
        if (to == rank) {
            halo_words(src, face->side, words, words_of_face);
            for (int i = 0; i < words; ++i)
                halo[face->dst] += words_of_face[i];
        } else {
            const int k = sends.peer_slot[to];
            halo_words(src, face->side, words, send_buffer + sends.partners[k].offset + packed[k]);
            packed[k] += words;
        }
    }
    free(packed);
    for (int k = 0; k < sends.count; ++k) {
        const Partner *p = &sends.partners[k];
        MPI_Isend(send_buffer + p->offset, p->words, MPI_LONG_LONG, p->peer, direction, MPI_COMM_WORLD,
                  &requests[receives.count + k]);
        log_send("MPI_Isend", p->words * (long long)sizeof(long long), p->peer, direction);
    }

    /* Unpack each message as it arrives: its faces in face order. */
    for (int done = 0; done < receives.count; ++done) {
        int k;
        MPI_Waitany(receives.count, requests, &k, MPI_STATUS_IGNORE);
        log_completion("MPI_Waitany", 1);
        const Partner *p = &receives.partners[k];
        const long long *word = recv_buffer + p->offset;
        for (int f = 0; f < face_count; ++f) {
            const Face *face = &faces[f];
            if (in_direction(face, direction) && mesh->blocks[face->src].owner == p->peer &&
                mesh->blocks[face->dst].owner == rank)
                for (int i = 0; i < face->cells * HALO_WORDS_PER_CELL; ++i)
                    halo[face->dst] += *word++;
        }
    }
    MPI_Waitall(sends.count, requests + receives.count, MPI_STATUSES_IGNORE);
    log_completion("MPI_Waitall", sends.count);

    const int received = receives.count;
    partners_clear(&receives);
    partners_clear(&sends);
    return received;
}

/* A timestep: the halo exchange, the owner's update, the checksum; returns the messages received. */
static int timestep_work(Mesh *mesh, int timestep, long long *checksum)
{
    static Face *faces;
    static long long *halo;
    if (faces == NULL) {
        faces = malloc(4 * (size_t)max_blocks * sizeof *faces);
        halo = malloc((size_t)max_blocks * sizeof *halo);
    }
    memset(halo, 0, mesh->count * sizeof *halo);
    const int face_count = find_faces(mesh, faces);
    int received = 0;
    for (int direction = 0; direction < DIRECTIONS; ++direction)
        received += exchange_direction(mesh, faces, face_count, direction, halo);

    long long local = 0;
    for (int i = 0; i < mesh->count; ++i) {
        Block *b = &mesh->blocks[i];
        if (b->owner != rank)
            continue;
        for (int j = 0; j < BLOCK_WORDS; ++j)
            b->data[j] = (b->data[j] * 31 + halo[i] + j + timestep) % PRIME;
        local += block_checksum(b);
    }
    MPI_Allreduce(&local, checksum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    log_call("MPI_Allreduce", sizeof(long long));
    return received;
}

/* Whether the edge of one of the two moving circles crosses block `b` at timestep `timestep`. */
static int on_an_edge(const Block *b, int timestep)
{
    const double w = width(b->level), x0 = b->x * w, y0 = b->y * w, x1 = x0 + w, y1 = y0 + w;
    for (int c = 0; c < 2; ++c) {
        /* Circle 0 crosses from west to east, circle 1 from south-east to north-west; both wrap. */
        const double t = timestep / 48.0;
        double cx = c == 0 ? 0.2 + t : 0.8 - 0.5 * t, cy = c == 0 ? 0.35 : 0.25 + 0.5 * t;
        cx = (cx - (int)cx) * cells_x;
        cy = (cy - (int)cy) * cells_y;
        const double radius = (c == 0 ? 0.22 : 0.15) * (cells_x < cells_y ? cells_x : cells_y);
        const double nx = cx < x0 ? x0 : cx > x1 ? x1 : cx, ny = cy < y0 ? y0 : cy > y1 ? y1 : cy;
        const double fx = cx - x0 > x1 - cx ? x0 : x1, fy = cy - y0 > y1 - cy ? y0 : y1;
        const double nearest = (nx - cx) * (nx - cx) + (ny - cy) * (ny - cy);
        const double farthest = (fx - cx) * (fx - cx) + (fy - cy) * (fy - cy);
        if (nearest <= radius * radius && radius * radius <= farthest)
            return 1;
    }
    return 0;
}

/* The first of the four siblings block i belongs to where one rank owns all four, else -1 (Morton
 * order puts a parent's four children next to each other, the first at even x and y). */
static int sibling_group(const Mesh *mesh, int i)
{
    const Block *b = &mesh->blocks[i];
    if (b->level == 0)
        return -1;
    for (int first = i - 3 > 0 ? i - 3 : 0; first <= i; ++first) {
        const Block *f = &mesh->blocks[first];
        if (first + 3 >= mesh->count || f->level != b->level || f->x % 2 != 0 || f->y % 2 != 0)
            continue;
        int whole = 1;
        for (int c = 1; c < 4 && whole; ++c) {
            const Block *s = &mesh->blocks[first + c];
            whole = s->level == b->level && s->x / 2 == f->x / 2 && s->y / 2 == f->y / 2 && s->owner == f->owner;
        }
        if (whole)
            return first;
    }
    return -1;
}

/* The levels every block wants at refinement `timestep`, settled so that neighbours differ by one level
 * at most; every rank decides its own blocks and learns its neighbours' in rounds. */
static void settle_levels(const Mesh *mesh, const Face *faces, int face_count, int timestep, int *want)
{
    static PartnerList neighbours;
    static int *group, *counts, *displacements, *mine;
    static int *recv_buffer, *send_buffer;
    static MPI_Request *requests;
    if (requests == NULL) {
        partners_init(&neighbours);
        group = malloc((size_t)max_blocks * sizeof *group);
        counts = malloc(size * sizeof *counts);
        displacements = malloc(size * sizeof *displacements);
        mine = malloc((size_t)max_blocks * sizeof *mine);
        requests = malloc(2 * (size_t)size * sizeof *requests);
    }
    int first_mine = -1, my_count = 0;
    for (int i = 0; i < mesh->count; ++i) {
        const Block *b = &mesh->blocks[i];
        group[i] = sibling_group(mesh, i);
        if (b->owner == rank) {
            first_mine = first_mine < 0 ? i : first_mine;
            ++my_count;
        }
        if (on_an_edge(b, timestep))
            want[i] = b->level < MAX_LEVEL ? b->level + 1 : MAX_LEVEL;
        else
            want[i] = group[i] >= 0 ? b->level - 1 : b->level;
    }
    /* Every rank sends each neighbour rank the wants of all its blocks (contiguous in Morton order). */
    for (int f = 0; f < face_count; ++f) {
        const int from = mesh->blocks[faces[f].src].owner, to = mesh->blocks[faces[f].dst].owner;
        if (to == rank && from != rank)
            partners_add(&neighbours, from, 0);
    }
    partners_finish(&neighbours);
    int owned_by_first = 0;
    for (int k = 0; k < neighbours.count; ++k) {
        int words = 0;
        for (int i = 0; i < mesh->count; ++i)
            words += mesh->blocks[i].owner == neighbours.partners[k].peer;
        neighbours.partners[k].words = words;
        neighbours.partners[k].offset = owned_by_first;
        owned_by_first += words;
    }
    recv_buffer = realloc(recv_buffer, (owned_by_first + 1) * sizeof *recv_buffer);
    send_buffer = realloc(send_buffer, (my_count + 1) * sizeof *send_buffer);

    long long changes = 1;
    while (changes != 0) {
        for (int k = 0; k < neighbours.count; ++k) {
            const Partner *p = &neighbours.partners[k];
            MPI_Irecv(recv_buffer + p->offset, p->words, MPI_INT, p->peer, TAG_LEVELS, MPI_COMM_WORLD, &requests[k]);
            log_recv("MPI_Irecv", p->words * (long long)sizeof(int), p->peer, TAG_LEVELS);
        }
        for (int j = 0; j < my_count; ++j)
            send_buffer[j] = want[first_mine + j];
        for (int k = 0; k < neighbours.count; ++k) {
            /* Faces go both ways: a rank's neighbours are the ranks it is a neighbour of. */
            MPI_Isend(send_buffer, my_count, MPI_INT, neighbours.partners[k].peer, TAG_LEVELS, MPI_COMM_WORLD,
                      &requests[neighbours.count + k]);
            log_send("MPI_Isend", my_count * (long long)sizeof(int), neighbours.partners[k].peer, TAG_LEVELS);
        }
        MPI_Waitall(2 * neighbours.count, requests, MPI_STATUSES_IGNORE);
        log_completion("MPI_Waitall", 2 * neighbours.count);
        for (int k = 0; k < neighbours.count; ++k) {
            const Partner *p = &neighbours.partners[k];
            for (int i = 0, j = 0; i < mesh->count; ++i)
                if (mesh->blocks[i].owner == p->peer)
                    want[i] = recv_buffer[p->offset + j++];
        }

        long long changed = 0;
        for (int f = 0; f < face_count; ++f) {
            const int dst = faces[f].dst;
            if (mesh->blocks[dst].owner == rank && want[dst] < want[faces[f].src] - 1) {
                want[dst] = want[faces[f].src] - 1;
                ++changed;
            }
        }
        /* Four siblings coarsen together or not at all. */
        for (int i = 0; i < mesh->count; ++i) {
            if (mesh->blocks[i].owner != rank || group[i] != i)
                continue;
            int keep = 0;
            for (int c = 0; c < 4; ++c)
                keep |= want[i + c] >= mesh->blocks[i].level;
            for (int c = 0; c < 4 && keep; ++c)
                if (want[i + c] < mesh->blocks[i].level) {
                    want[i + c] = mesh->blocks[i].level;
                    ++changed;
                }
        }
        MPI_Allreduce(&changed, &changes, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        log_call("MPI_Allreduce", sizeof(long long));
    }
    partners_clear(&neighbours);

    for (int r = 0, at = 0; r < size; ++r) {
        displacements[r] = at;
        counts[r] = 0;
        while (at < mesh->count && mesh->blocks[at].owner == r) {
            ++counts[r];
            ++at;
        }
    }
    for (int j = 0; j < my_count; ++j)
        send_buffer[j] = want[first_mine + j];
    MPI_Allgatherv(send_buffer, my_count, MPI_INT, mine, counts, displacements, MPI_INT, MPI_COMM_WORLD);
    log_call("MPI_Allgatherv", (my_count + (long long)mesh->count) * (long long)sizeof(int));
    memcpy(want, mine, mesh->count * sizeof *want);
}

/* Splits and coarsens as `want` says; the owner of a block computes the data of what replaces it. */
static void refine(Mesh *mesh, const int *want)
{
    static Block *next;
    if (next == NULL)
        next = malloc((size_t)max_blocks * sizeof *next);
    int count = 0;
    for (int i = 0; i < mesh->count;) {
        const Block *b = &mesh->blocks[i];
        if (want[i] < b->level) { /* the first of four siblings, all of which want one level less */
            Block *parent = &next[count++];
            *parent = (Block){b->level - 1, b->x / 2, b->y / 2, b->owner, {0}};
            for (int c = 0; c < 4 && b->owner == rank; ++c)
                for (int j = 0; j < BLOCK_WORDS; ++j)
                    parent->data[j] = (parent->data[j] + mesh->blocks[i + c].data[j]) % PRIME;
            i += 4;
            continue;
        }
        if (want[i] > b->level) {
            for (int c = 0; c < 4; ++c) {
                Block *child = &next[count++];
                *child = (Block){b->level + 1, 2 * b->x + c % 2, 2 * b->y + c / 2, b->owner, {0}};
                for (int j = 0; j < BLOCK_WORDS && b->owner == rank; ++j)
                    child->data[j] = (b->data[j] * (c + 2) + j) % PRIME;
            }
        } else {
            next[count++] = *b;
        }
        ++i;
    }
    qsort(next, count, sizeof *next, by_morton);
    Block *old = mesh->blocks;
    mesh->blocks = next;
    mesh->count = count;
    next = old;
}

/* Moves every block to its owner under the new partition; returns how many inconsistencies this rank
 * found (counts that the MPI_Alltoall and the mesh disagree on, blocks that arrived unexpected). Adds
 * the blocks that move (all ranks', the same on every rank) to `moved`. */
static long long rebalance(Mesh *mesh, long long *moved)
{
    static int *new_owner, *send_counts, *recv_counts, *expected;
    static PartnerList receives, sends;
    static MPI_Request *requests;
    static long long *recv_buffer, *send_buffer;
    if (new_owner == NULL) {
        new_owner = malloc((size_t)max_blocks * sizeof *new_owner);
        send_counts = malloc(size * sizeof *send_counts);
        recv_counts = malloc(size * sizeof *recv_counts);
        expected = malloc(size * sizeof *expected);
        partners_init(&receives);
        partners_init(&sends);
        requests = malloc(2 * (size_t)size * sizeof *requests);
    }
    partition(mesh, new_owner);
    memset(send_counts, 0, size * sizeof *send_counts);
    memset(expected, 0, size * sizeof *expected);
    for (int i = 0; i < mesh->count; ++i) {
        const int from = mesh->blocks[i].owner, to = new_owner[i];
        if (from != to) {
            *moved += 1;
            if (from == rank) {
                send_counts[to] += 1;
                partners_add(&sends, to, MIGRATE_WORDS);
            }
            if (to == rank)
                expected[from] += 1;
        }
    }
    MPI_Alltoall(send_counts, 1, MPI_INT, recv_counts, 1, MPI_INT, MPI_COMM_WORLD);
    log_call("MPI_Alltoall", 2 * (long long)sizeof(int));
    long long errors = 0;
    for (int r = 0; r < size; ++r) {
        errors += recv_counts[r] != expected[r];
        if (recv_counts[r] > 0)
            partners_add(&receives, r, recv_counts[r] * MIGRATE_WORDS);
    }
    const int recv_words = partners_finish(&receives), send_words = partners_finish(&sends);
    recv_buffer = realloc(recv_buffer, (recv_words + 1) * sizeof *recv_buffer);
    send_buffer = realloc(send_buffer, (send_words + 1) * sizeof *send_buffer);

    for (int k = 0; k < receives.count; ++k) {
        const Partner *p = &receives.partners[k];
        MPI_Irecv(recv_buffer + p->offset, p->words, MPI_LONG_LONG, p->peer, TAG_MIGRATE, MPI_COMM_WORLD, &requests[k]);
        log_recv("MPI_Irecv", p->words * (long long)sizeof(long long), p->peer, TAG_MIGRATE);
    }
    long long *at = send_buffer;
    for (int i = 0; i < mesh->count; ++i) { /* in Morton order, partners' blocks one run after another */
        const Block *b = &mesh->blocks[i];
        if (b->owner != rank || new_owner[i] == rank)
            continue;
        at[0] = b->level;
        at[1] = b->x;
        at[2] = b->y;
        memcpy(at + HEADER_WORDS, b->data, sizeof b->data);
        at += MIGRATE_WORDS;
    }
    for (int k = 0; k < sends.count; ++k) {
        const Partner *p = &sends.partners[k];
        MPI_Isend(send_buffer + p->offset, p->words, MPI_LONG_LONG, p->peer, TAG_MIGRATE, MPI_COMM_WORLD,
                  &requests[receives.count + k]);
        log_send("MPI_Isend", p->words * (long long)sizeof(long long), p->peer, TAG_MIGRATE);
    }
    MPI_Waitall(receives.count + sends.count, requests, MPI_STATUSES_IGNORE);
    log_completion("MPI_Waitall", receives.count + sends.count);

    /* What arrived must be the blocks the mesh says, in Morton order per sender. */
    for (int k = 0; k < receives.count; ++k) {
        const Partner *p = &receives.partners[k];
        const long long *message = recv_buffer + p->offset;
        for (int i = 0; i < mesh->count; ++i) {
            Block *b = &mesh->blocks[i];
            if (b->owner != p->peer || new_owner[i] != rank)
                continue;
            if (message >= recv_buffer + p->offset + p->words || b->level != message[0] || b->x != message[1] ||
                b->y != message[2]) {
                ++errors;
                break;
            }
            memcpy(b->data, message + HEADER_WORDS, sizeof b->data);
            message += MIGRATE_WORDS;
        }
    }
    for (int i = 0; i < mesh->count; ++i)
        mesh->blocks[i].owner = new_owner[i];
    partners_clear(&receives);
    partners_clear(&sends);
    return errors;
}

/* {blocks owned, checksum of their data, inconsistencies} summed over all ranks. */
static void global_sums(const Mesh *mesh, long long errors, long long sums[3])
{
    long long local[3] = {0, 0, errors};
    for (int i = 0; i < mesh->count; ++i)
        if (mesh->blocks[i].owner == rank) {
            local[0] += 1;
            local[1] += block_checksum(&mesh->blocks[i]);
        }
    MPI_Allreduce(local, sums, 3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    log_call("MPI_Allreduce", 3 * (long long)sizeof(long long));
}

/* The most square px x py = size, px >= py. */
static void rank_grid(int *px, int *py)
{
    *py = 1;
    for (int d = 1; d * d <= size; ++d)
        if (size % d == 0)
            *py = d;
    *px = size / *py;
}

int main(int argc, char **argv)
{
    logged_start(&argc, &argv, &rank, &size);

    const int timesteps = argc > 1 ? atoi(argv[1]) : 24;
    const int refine_every = argc > 2 && atoi(argv[2]) > 0 ? atoi(argv[2]) : 4;

    int px, py;
    rank_grid(&px, &py);
    const int roots_x = ROOTS * px, roots_y = ROOTS * py;
    cells_x = roots_x * ROOT_CELLS;
    cells_y = roots_y * ROOT_CELLS;
    max_blocks = cells_x * cells_y;

    /* The root blocks in Morton order, partitioned at once. */
    static Mesh mesh;
    mesh.blocks = malloc((size_t)max_blocks * sizeof *mesh.blocks);
    mesh.count = 0;
    for (int y = 0; y < roots_y; ++y)
        for (int x = 0; x < roots_x; ++x)
            mesh.blocks[mesh.count++] = (Block){0, x, y, 0, {0}};
    qsort(mesh.blocks, mesh.count, sizeof mesh.blocks[0], by_morton);
    int *owner = malloc((size_t)max_blocks * sizeof *owner);
    partition(&mesh, owner);
    for (int i = 0; i < mesh.count; ++i) {
        Block *b = &mesh.blocks[i];
        b->owner = owner[i];
        for (int j = 0; j < BLOCK_WORDS; ++j)
            b->data[j] = (long long)((morton(b) * 131 + j * 17 + hash3((uint32_t)i, 0, 0) % 97) % PRIME);
    }
    free(owner);

    Face *faces = malloc(4 * (size_t)max_blocks * sizeof *faces);
    int *want = malloc((size_t)max_blocks * sizeof *want);
    long long errors = 0, moved = 0, halo_messages = 0, checksum = 0, sums[3] = {0, 0, 0};
    int refinements = 0;
    for (int timestep = 0; timestep < timesteps; ++timestep) {
        halo_messages += timestep_work(&mesh, timestep, &checksum);
        if ((timestep + 1) % refine_every == 0 && timestep + 1 < timesteps) {
            const int face_count = find_faces(&mesh, faces);
            settle_levels(&mesh, faces, face_count, timestep + 1, want);
            refine(&mesh, want);
            errors += rebalance(&mesh, &moved);
            ++refinements;
            global_sums(&mesh, errors, sums);
            if (sums[0] != mesh.count || sums[2] != 0) {
                if (rank == 0)
                    fprintf(stderr, "amr: after refinement %d the ranks own %lld of %d blocks, %lld inconsistencies\n",
                            refinements, sums[0], mesh.count, sums[2]);
                log_call("MPI_Abort", 0);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
    }
    global_sums(&mesh, errors, sums);
    long long halo_total = 0;
    MPI_Allreduce(&halo_messages, &halo_total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    log_call("MPI_Allreduce", sizeof(long long));

    if (rank == 0) {
        int per_level[MAX_LEVEL + 1] = {0};
        for (int i = 0; i < mesh.count; ++i)
            per_level[mesh.blocks[i].level] += 1;
        printf("amr: ranks %d timesteps %d refinements %d blocks %d (levels %d/%d/%d) moved %lld halo messages %lld "
               "checksum %lld\n",
               size, timesteps, refinements, mesh.count, per_level[0], per_level[1], per_level[2], moved,
               halo_total, sums[1]);
    }

    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
