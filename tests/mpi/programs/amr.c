/* An adaptive mesh, the shape of a block-structured AMR code: a periodic 2-D domain of square blocks
 * (a 4x4 grid of root blocks, each refined up to twice, so a block is 4, 2 or 1 fine cells wide),
 * kept in Morton order and partitioned into contiguous runs of roughly equal work (a block of level L
 * weighs 1 + L). Every rank knows the whole mesh (it is computed, deterministically, on every rank),
 * but only the owner of a block holds its data.
 *
 * Every timestep, a halo exchange: for every face between two blocks owned by different ranks the
 * receiving side posts an MPI_Irecv and the sending side an MPI_Isend (tag: the side of the receiving
 * block, 0..3; bytes: 16 per fine cell of the face), so how many requests a rank has differs between
 * ranks and timesteps; the rank completes them in a loop of MPI_Waitany until all are done (every
 * third timestep MPI_Waitsome instead), then updates its blocks. Every REFINE_EVERY timesteps blocks
 * split or coarsen (decided from a hash of the timestep and the block), and a rebalance moves blocks
 * to their new owners: an MPI_Alltoall of how many blocks each rank sends each other rank, then one
 * blocking MPI_Send / MPI_Recv per block, pair by pair in increasing order of the partner's rank, the
 * lower rank of a pair sending first and the higher receiving first (safe even if every send waits for
 * its receive), then an MPI_Allreduce of the block count, a checksum and any inconsistency found. An
 * MPI_Allreduce of the final checksum ends the job.
 *
 * Exercises: request counts, message sizes and peers that change per rank and timestep (what merging
 * must fold into histograms), Waitany/Waitsome completion loops, a rebalance whose messages depend on
 * data. The output holds only sums of the data and counts of the mesh, which timing cannot change.
 *
 * Usage: amr [TIMESTEPS [REFINE_EVERY]]    (defaults 24, 4; any rank count: ranks may own no block) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logged_start.h"

enum { BASE = 4, MAX_LEVEL = 2, FINE = BASE << MAX_LEVEL }; /* root blocks per side; fine cells per side */
enum { MAX_BLOCKS = FINE * FINE, MAX_FACES = 4 * MAX_BLOCKS };
enum { BLOCK_WORDS = 16 };                         /* long longs of data per block */
enum { HALO_WORDS_PER_CELL = 2, MAX_HALO_WORDS = HALO_WORDS_PER_CELL * (FINE / BASE) };
enum { HEADER_WORDS = 3, MIGRATE_WORDS = HEADER_WORDS + BLOCK_WORDS }; /* level, x, y, data */
enum { WEST, EAST, SOUTH, NORTH, SIDES };
enum { TAG_MIGRATE = 10 };
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
    Block blocks[MAX_BLOCKS];
} Mesh;

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
    return FINE / (BASE << level);
}

/* Morton key of a block's first fine cell: bits of x and y interleaved. */
static unsigned morton(const Block *b)
{
    const unsigned fx = (unsigned)(b->x * width(b->level)), fy = (unsigned)(b->y * width(b->level));
    unsigned key = 0;
    for (int bit = 0; (FINE >> bit) > 1; ++bit)
        key |= ((fx >> bit) & 1u) << (2 * bit) | ((fy >> bit) & 1u) << (2 * bit + 1);
    return key;
}

static int by_morton(const void *a, const void *b)
{
    const unsigned ka = morton(a), kb = morton(b);
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

/* Contiguous runs of roughly equal weight: block i goes to the rank whose share holds the middle of
 * its weight. */
static void partition(Mesh *mesh, int size, int *owner)
{
    long long total = 0, before = 0;
    for (int i = 0; i < mesh->count; ++i)
        total += 1 + mesh->blocks[i].level;
    for (int i = 0; i < mesh->count; ++i) {
        const int weight = 1 + mesh->blocks[i].level;
        const long long r = (2 * before + weight) * size / (2 * total);
        owner[i] = r < size ? (int)r : size - 1;
        before += weight;
    }
}

/* Every face between two blocks, sorted by (src, dst, side): the order both ends post in. */
static int find_faces(const Mesh *mesh, Face *faces)
{
    static int cell_block[FINE][FINE];
    for (int i = 0; i < mesh->count; ++i) {
        const Block *b = &mesh->blocks[i];
        const int w = width(b->level);
        for (int dx = 0; dx < w; ++dx)
            for (int dy = 0; dy < w; ++dy)
                cell_block[b->x * w + dx][b->y * w + dy] = i;
    }
    int count = 0;
    for (int i = 0; i < mesh->count; ++i) {
        const Block *b = &mesh->blocks[i];
        const int w = width(b->level), fx = b->x * w, fy = b->y * w;
        for (int side = 0; side < SIDES; ++side) {
            int previous = -1;
            for (int k = 0; k < w; ++k) {
                int cx = side == WEST ? fx - 1 : side == EAST ? fx + w : fx + k;
                int cy = side == SOUTH ? fy - 1 : side == NORTH ? fy + w : fy + k;
                const int neighbor = cell_block[(cx + FINE) % FINE][(cy + FINE) % FINE];
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
        out[i] = (b->data[(i * 5 + side) % BLOCK_WORDS] + i) % PRIME;
}

static long long block_checksum(const Block *b)
{
    long long sum = 0;
    for (int j = 0; j < BLOCK_WORDS; ++j)
        sum += b->data[j] * (j + 1);
    return sum;
}

/* One timestep's halo exchange and update of this rank's blocks; returns the messages it received. */
static int exchange_and_update(Mesh *mesh, int rank, int timestep)
{
    static Face faces[MAX_FACES];
    static long long buffers[MAX_FACES][MAX_HALO_WORDS];
    static MPI_Request requests[MAX_FACES];
    static int request_face[MAX_FACES], indices[MAX_FACES];
    long long halo[MAX_BLOCKS] = {0};

    const int face_count = find_faces(mesh, faces);
    int request_count = 0, received = 0;
    for (int f = 0; f < face_count; ++f) {
        const Face *face = &faces[f];
        const Block *src = &mesh->blocks[face->src], *dst = &mesh->blocks[face->dst];
        const int words = face->cells * HALO_WORDS_PER_CELL;
        const long long bytes = words * (long long)sizeof(long long);
        if (dst->owner == rank && src->owner != rank) {
            MPI_Irecv(buffers[f], words, MPI_LONG_LONG, src->owner, face->side, MPI_COMM_WORLD,
                      &requests[request_count]);
            log_recv("MPI_Irecv", bytes, src->owner, face->side);
            request_face[request_count++] = f;
            ++received;
        } else if (src->owner == rank) {
            halo_words(src, face->side, words, buffers[f]);
            if (dst->owner == rank) {
                for (int i = 0; i < words; ++i)
                    halo[face->dst] += buffers[f][i];
            } else {
                MPI_Isend(buffers[f], words, MPI_LONG_LONG, dst->owner, face->side, MPI_COMM_WORLD,
                          &requests[request_count]);
                log_send("MPI_Isend", bytes, dst->owner, face->side);
                request_face[request_count++] = -1;
            }
        }
    }

    if (timestep % 3 == 2) {
        int outcount;
        for (int done = 0; done < request_count; done += outcount) {
            MPI_Waitsome(request_count, requests, &outcount, indices, MPI_STATUSES_IGNORE);
            log_completion("MPI_Waitsome", outcount);
        }
    } else {
        for (int done = 0; done < request_count; ++done) {
            int index;
            MPI_Waitany(request_count, requests, &index, MPI_STATUS_IGNORE);
            log_completion("MPI_Waitany", 1);
        }
    }
    /* Sums do not depend on the order the messages completed in. */
    for (int r = 0; r < request_count; ++r) {
        const int f = request_face[r];
        if (f < 0)
            continue;
        for (int i = 0; i < faces[f].cells * HALO_WORDS_PER_CELL; ++i)
            halo[faces[f].dst] += buffers[f][i];
    }

    for (int i = 0; i < mesh->count; ++i) {
        Block *b = &mesh->blocks[i];
        if (b->owner != rank)
            continue;
        for (int j = 0; j < BLOCK_WORDS; ++j)
            b->data[j] = (b->data[j] * 31 + halo[i] + j + timestep) % PRIME;
    }
    return received;
}

/* Whether block `b` splits at timestep `timestep`: finer blocks split less often, so the mesh does not
 * drift to the finest level. */
static int splits(const Block *b, int timestep)
{
    return b->level < MAX_LEVEL && hash3((uint32_t)timestep, morton(b), (uint32_t)b->level) % (4 + 2 * b->level) == 0;
}

/* Splits and coarsenings of timestep `timestep`, on every rank alike; the owner of a block computes
 * the data of what replaces it. Four siblings coarsen (3 times in 4) when none of them splits and one
 * rank owns all four. */
static void refine(Mesh *mesh, int rank, int timestep)
{
    static Mesh next;
    next.count = 0;
    for (int i = 0; i < mesh->count;) {
        const Block *b = &mesh->blocks[i];
        const unsigned key = morton(b);
        /* Morton order puts the four children of a parent next to each other, the first at even x, y. */
        int siblings = b->level > 0 && b->x % 2 == 0 && b->y % 2 == 0 && i + 3 < mesh->count;
        for (int c = 1; siblings && c < 4; ++c) {
            const Block *s = &mesh->blocks[i + c];
            siblings = s->level == b->level && s->x / 2 == b->x / 2 && s->y / 2 == b->y / 2 && s->owner == b->owner;
        }
        for (int c = 0; siblings && c < 4; ++c)
            siblings = !splits(&mesh->blocks[i + c], timestep);
        if (siblings && hash3((uint32_t)timestep, key, 7u) % 4 != 0) {
            Block *parent = &next.blocks[next.count++];
            *parent = (Block){b->level - 1, b->x / 2, b->y / 2, b->owner, {0}};
            for (int c = 0; c < 4 && b->owner == rank; ++c)
                for (int j = 0; j < BLOCK_WORDS; ++j)
                    parent->data[j] = (parent->data[j] + mesh->blocks[i + c].data[j]) % PRIME;
            i += 4;
            continue;
        }
        if (splits(b, timestep)) {
            for (int c = 0; c < 4; ++c) {
                Block *child = &next.blocks[next.count++];
                *child = (Block){b->level + 1, 2 * b->x + c % 2, 2 * b->y + c / 2, b->owner, {0}};
                for (int j = 0; j < BLOCK_WORDS && b->owner == rank; ++j)
                    child->data[j] = (b->data[j] * (c + 2) + j) % PRIME;
            }
        } else {
            next.blocks[next.count++] = *b;
        }
        ++i;
    }
    qsort(next.blocks, next.count, sizeof next.blocks[0], by_morton);
    memcpy(mesh, &next, sizeof next);
}

/* Moves every block to its owner under the new partition; returns how many inconsistencies this rank
 * found (counts that the MPI_Alltoall and the mesh disagree on, blocks that arrived unexpected). Adds
 * the blocks that move (all ranks', the same on every rank) to `moved`. */
static long long rebalance(Mesh *mesh, int rank, int size, long long *moved)
{
    static int new_owner[MAX_BLOCKS];
    partition(mesh, size, new_owner);
    int *send_counts = calloc(size, sizeof(int)), *recv_counts = calloc(size, sizeof(int));
    int *expected = calloc(size, sizeof(int));
    for (int i = 0; i < mesh->count; ++i) {
        const int from = mesh->blocks[i].owner, to = new_owner[i];
        if (from != to) {
            *moved += 1;
            if (from == rank)
                send_counts[to] += 1;
            if (to == rank)
                expected[from] += 1;
        }
    }
    MPI_Alltoall(send_counts, 1, MPI_INT, recv_counts, 1, MPI_INT, MPI_COMM_WORLD);
    log_call("MPI_Alltoall", 2 * (long long)sizeof(int));
    long long errors = 0;
    for (int r = 0; r < size; ++r)
        errors += recv_counts[r] != expected[r];

    const long long migrate_bytes = MIGRATE_WORDS * (long long)sizeof(long long);
    long long message[MIGRATE_WORDS];
    for (int partner = 0; partner < size; ++partner) {
        if (partner == rank)
            continue;
        for (int turn = 0; turn < 2; ++turn) {
            const int sending = (turn == 0) == (rank < partner); /* the lower rank sends first */
            if (sending) {
                for (int i = 0; i < mesh->count; ++i) {
                    const Block *b = &mesh->blocks[i];
                    if (b->owner != rank || new_owner[i] != partner)
                        continue;
                    message[0] = b->level;
                    message[1] = b->x;
                    message[2] = b->y;
                    memcpy(message + HEADER_WORDS, b->data, sizeof b->data);
                    MPI_Send(message, MIGRATE_WORDS, MPI_LONG_LONG, partner, TAG_MIGRATE, MPI_COMM_WORLD);
                    log_send("MPI_Send", migrate_bytes, partner, TAG_MIGRATE);
                }
            } else {
                for (int k = 0; k < recv_counts[partner]; ++k) {
                    MPI_Recv(message, MIGRATE_WORDS, MPI_LONG_LONG, partner, TAG_MIGRATE, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
                    log_recv("MPI_Recv", migrate_bytes, partner, TAG_MIGRATE);
                    int found = -1;
                    for (int i = 0; i < mesh->count && found < 0; ++i) {
                        const Block *b = &mesh->blocks[i];
                        if (b->level == message[0] && b->x == message[1] && b->y == message[2] &&
                            b->owner == partner && new_owner[i] == rank)
                            found = i;
                    }
                    if (found < 0)
                        ++errors;
                    else
                        memcpy(mesh->blocks[found].data, message + HEADER_WORDS, sizeof mesh->blocks[found].data);
                }
            }
        }
    }
    for (int i = 0; i < mesh->count; ++i)
        mesh->blocks[i].owner = new_owner[i];
    free(send_counts);
    free(recv_counts);
    free(expected);
    return errors;
}

/* {blocks owned, checksum of their data, inconsistencies} summed over all ranks. */
static void global_sums(const Mesh *mesh, int rank, long long errors, long long sums[3])
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

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);

    const int timesteps = argc > 1 ? atoi(argv[1]) : 24;
    const int refine_every = argc > 2 && atoi(argv[2]) > 0 ? atoi(argv[2]) : 4;

    /* The root blocks, some of them split once before the run starts, partitioned at once. */
    static Mesh mesh;
    mesh.count = 0;
    for (int y = 0; y < BASE; ++y)
        for (int x = 0; x < BASE; ++x)
            mesh.blocks[mesh.count++] = (Block){0, x, y, 0, {0}};
    qsort(mesh.blocks, mesh.count, sizeof mesh.blocks[0], by_morton);
    refine(&mesh, -1, 0); /* rank -1: no data yet, so no rank computes any */
    static int owner[MAX_BLOCKS];
    partition(&mesh, size, owner);
    for (int i = 0; i < mesh.count; ++i) {
        Block *b = &mesh.blocks[i];
        b->owner = owner[i];
        for (int j = 0; j < BLOCK_WORDS; ++j)
            b->data[j] = (morton(b) * 131 + j * 17 + b->level) % PRIME;
    }

    long long errors = 0, moved = 0, halo_messages = 0, sums[3] = {0, 0, 0};
    int refinements = 0;
    for (int timestep = 0; timestep < timesteps; ++timestep) {
        halo_messages += exchange_and_update(&mesh, rank, timestep);
        if ((timestep + 1) % refine_every == 0 && timestep + 1 < timesteps) {
            refine(&mesh, rank, timestep + 1);
            errors += rebalance(&mesh, rank, size, &moved);
            ++refinements;
            global_sums(&mesh, rank, errors, sums);
            if (sums[0] != mesh.count || sums[2] != 0) {
                if (rank == 0)
                    fprintf(stderr, "amr: after refinement %d the ranks own %lld of %d blocks, %lld inconsistencies\n",
                            refinements, sums[0], mesh.count, sums[2]);
                log_call("MPI_Abort", 0);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
    }
    global_sums(&mesh, rank, errors, sums);
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
