// SPDX-License-Identifier: MIT
/*
 * The device VA space of a file of the in-process device: VM_BIND and
 * VM_UNBIND with the module's rules, order of checks and errnos
 * (kmod/vaccel_vm.c), and the translation of device addresses into the
 * engines' mappings of the objects, the only way the packet core touches
 * memory.
 *
 * Safe against a concurrent unbind as the module's is: a translation
 * takes a reference on the mapping, which holds the object, which holds
 * the memory; an unbind removes the mapping and drops the bound
 * reference, so the memory goes only when the last translation in use is
 * done. Each queue's engine keeps a small cache of referenced mappings
 * (struct sim_tlb) checked against the VM's generation, which every
 * unbind bumps; VM_UNBIND then drops the stale entries under each engine's
 * lock, so an unbound range is released at once unless a step uses it.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

#define SIM_VM_ACCESS	(DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE)

void sim_vm_init(struct sim_vm *vm)
{
	pthread_mutex_init(&vm->lock, NULL);
	vm->maps = NULL;
	vm->n = vm->cap = 0;
	atomic_init(&vm->gen, 0);
}

static void sim_map_free(struct sim_map *map)
{
	if (map->access & DRM_VACCEL_VM_WRITE)
		sim_bo_put_write(map->bo);
	sim_bo_put(map->bo);
	free(map);
	atomic_fetch_sub(&sim_objects.mappings, 1);
}

void sim_map_put(struct sim_map *map)
{
	if (atomic_fetch_sub_explicit(&map->refs, 1, memory_order_acq_rel) == 1)
		sim_map_free(map);
}

/* Index of the first mapping at or after @va. Lock held. */
static unsigned int vm_search(const struct sim_vm *vm, uint64_t va)
{
	unsigned int lo = 0, hi = vm->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (vm->maps[mid]->va < va)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The mapping containing @va, or NULL. Lock held. */
static struct sim_map *vm_lookup(const struct sim_vm *vm, uint64_t va)
{
	unsigned int i;
	struct sim_map *m;

	if (va < SIM_VA_START || va >= SIM_VA_END)
		return NULL;
	i = vm_search(vm, va);
	if (i < vm->n && vm->maps[i]->va == va)
		return vm->maps[i];
	if (!i)
		return NULL;
	m = vm->maps[i - 1];
	return va - m->va < m->size ? m : NULL;
}

void *sim_vm_translate(struct sim_vm *vm, uint64_t va, uint64_t len, uint32_t access,
		       struct sim_map **mapp, uint64_t *avail, int *err)
{
	struct sim_map *map;
	uint64_t in_map;

	*err = -EFAULT;
	if (!len)
		return NULL;
	pthread_mutex_lock(&vm->lock);
	map = vm_lookup(vm, va);
	if (!map)
		goto out;
	in_map = map->va + map->size - va;
	if (avail)
		*avail = len < in_map ? len : in_map;
	else if (len > in_map)
		goto out;
	if ((map->access & access) != access) {
		*err = -EACCES;
		goto out;
	}
	atomic_fetch_add_explicit(&map->refs, 1, memory_order_relaxed);
	pthread_mutex_unlock(&vm->lock);
	*mapp = map;
	*err = 0;
	return map->ptr + (va - map->va);
out:
	pthread_mutex_unlock(&vm->lock);
	return NULL;
}

void *sim_vm_translate_tlb(struct sim_vm *vm, struct sim_tlb *tlb, uint64_t va, uint64_t len,
			   uint32_t access, struct sim_map **mapp, uint64_t *avail, bool *held,
			   int *err)
{
	uint64_t gen = atomic_load_explicit(&vm->gen, memory_order_acquire), in_map;
	struct sim_map *map, *old;
	unsigned int i;
	void *p;

	for (i = 0; i < SIM_TLB_SIZE; i++) {
		map = tlb->map[i];
		if (!map || tlb->gen[i] != gen || va < map->va || va - map->va >= map->size)
			continue;
		if (!len) {
			*err = -EFAULT;
			return NULL;
		}
		in_map = map->va + map->size - va;
		if (avail)
			*avail = len < in_map ? len : in_map;
		else if (len > in_map)
			break;	/* past this mapping: the slow path's answer */
		if ((map->access & access) != access) {
			*err = -EACCES;
			return NULL;
		}
		*mapp = map;
		*held = false;
		*err = 0;
		return map->ptr + (va - map->va);
	}
	/* gen was read before the lookup: a removal meanwhile stales the entry */
	p = sim_vm_translate(vm, va, len, access, mapp, avail, err);
	if (!p)
		return NULL;
	*held = true;
	i = tlb->next++ % SIM_TLB_SIZE;
	old = tlb->map[i];
	atomic_fetch_add_explicit(&(*mapp)->refs, 1, memory_order_relaxed);
	tlb->map[i] = *mapp;
	tlb->gen[i] = gen;
	if (old)
		sim_map_put(old);
	return p;
}

void sim_vm_tlb_flush(struct sim_vm *vm, struct sim_tlb *tlb, bool all)
{
	uint64_t gen = atomic_load(&vm->gen);
	unsigned int i;

	for (i = 0; i < SIM_TLB_SIZE; i++) {
		if (!tlb->map[i] || (!all && tlb->gen[i] == gen))
			continue;
		sim_map_put(tlb->map[i]);
		tlb->map[i] = NULL;
	}
}

int sim_vm_bind(struct sim_file *f, struct drm_vaccel_vm_bind *b)
{
	struct sim_vm *vm = &f->vm;
	struct sim_map *map, **maps;
	struct sim_bo *bo, *o;
	uint64_t end, bo_end;
	unsigned int i, cap;
	int ret;

	if (!b->flags || (b->flags & ~SIM_VM_ACCESS))
		return -EINVAL;
	if (!b->size || b->size % SIM_PAGE || b->va % SIM_PAGE || b->bo_offset % SIM_PAGE)
		return -EINVAL;
	if (__builtin_add_overflow(b->va, b->size, &end) ||
	    __builtin_add_overflow(b->bo_offset, b->size, &bo_end))
		return -EOVERFLOW;
	if (b->va < SIM_VA_START || end > SIM_VA_END)
		return -ERANGE;
	if (!sim_dev_enter(f->dev))
		return -ENODEV;
	ret = -ENOMEM;
	if (sim_inject(&f->dev->knobs.fail_vm_bind))
		goto out_exit;
	bo = sim_handle_get(f, b->handle);
	ret = -ENOENT;
	if (!bo)
		goto out_exit;
	ret = -EINVAL;
	if (bo_end > bo->size)
		goto out_put;
	ret = -ENOMEM;
	map = calloc(1, sizeof(*map));
	if (!map)
		goto out_put;
	o = sim_bo_owner(bo);
	atomic_init(&map->refs, 1);
	map->va = b->va;
	map->size = b->size;
	map->bo_offset = b->bo_offset;
	map->access = b->flags;
	map->bo = bo;	/* the reference of sim_handle_get() */
	map->ptr = o->kmap + b->bo_offset;
	map->remote = o->foreign || o->dev != f->dev;
	if (map->access & DRM_VACCEL_VM_WRITE) {
		ret = sim_bo_get_write(bo);
		if (ret) {
			free(map);
			goto out_put;
		}
	}
	pthread_mutex_lock(&vm->lock);
	i = vm_search(vm, b->va);
	if (vm->n >= SIM_MAX_MAPPINGS) {
		ret = -ENOSPC;
	} else if ((i < vm->n && vm->maps[i]->va < end) ||
		   (i && vm->maps[i - 1]->va + vm->maps[i - 1]->size > b->va)) {
		ret = -EBUSY;
	} else if (vm->n == vm->cap) {
		cap = vm->cap ? 2 * vm->cap : 16;
		maps = realloc(vm->maps, cap * sizeof(*maps));
		ret = maps ? 0 : -ENOMEM;
		if (maps) {
			vm->maps = maps;
			vm->cap = cap;
		}
	} else {
		ret = 0;
	}
	if (!ret) {
		memmove(&vm->maps[i + 1], &vm->maps[i], (vm->n - i) * sizeof(*vm->maps));
		vm->maps[i] = map;
		vm->n++;
	}
	pthread_mutex_unlock(&vm->lock);
	if (ret) {
		if (map->access & DRM_VACCEL_VM_WRITE)
			sim_bo_put_write(bo);
		free(map);
		goto out_put;
	}
	atomic_fetch_add(&sim_objects.mappings, 1);
	sim_dev_exit(f->dev);
	return 0;	/* the mapping keeps the object reference */
out_put:
	sim_bo_put(bo);
out_exit:
	sim_dev_exit(f->dev);
	return ret;
}

int sim_vm_unbind(struct sim_file *f, struct drm_vaccel_vm_unbind *u)
{
	struct sim_vm *vm = &f->vm;
	struct sim_map *map;
	unsigned int i;

	if (u->flags || u->pad)
		return -EINVAL;
	if (!sim_dev_enter(f->dev))
		return -ENODEV;
	pthread_mutex_lock(&vm->lock);
	map = vm_lookup(vm, u->va);
	if (!map || map->va != u->va) {
		pthread_mutex_unlock(&vm->lock);
		sim_dev_exit(f->dev);
		return -ENOENT;
	}
	if (map->size != u->size) {
		pthread_mutex_unlock(&vm->lock);
		sim_dev_exit(f->dev);
		return -EINVAL;
	}
	i = vm_search(vm, u->va);
	memmove(&vm->maps[i], &vm->maps[i + 1], (vm->n - i - 1) * sizeof(*vm->maps));
	vm->n--;
	atomic_fetch_add_explicit(&vm->gen, 1, memory_order_release);	/* caches look again */
	pthread_mutex_unlock(&vm->lock);

	/* the queues' cached references go, so the memory goes now unless in use */
	sim_queues_tlb_flush(f);
	sim_map_put(map);
	sim_dev_exit(f->dev);
	return 0;
}

void sim_vm_fini(struct sim_vm *vm)
{
	unsigned int i, n;
	struct sim_map **maps;

	pthread_mutex_lock(&vm->lock);
	maps = vm->maps;
	n = vm->n;
	vm->maps = NULL;
	vm->n = vm->cap = 0;
	atomic_fetch_add(&vm->gen, 1);
	pthread_mutex_unlock(&vm->lock);
	for (i = 0; i < n; i++)
		sim_map_put(maps[i]);
	free(maps);
	pthread_mutex_destroy(&vm->lock);
}

unsigned int sim_vm_count(struct sim_vm *vm)
{
	unsigned int n;

	pthread_mutex_lock(&vm->lock);
	n = vm->n;
	pthread_mutex_unlock(&vm->lock);
	return n;
}

/* debugfs "vm": one line per mapping of @vm (the module's format). */
size_t sim_vm_show(struct sim_vm *vm, unsigned int ctx, char *buf, size_t len)
{
	static const char *const access[] = { "-", "r", "w", "rw" };
	size_t n = 0;
	unsigned int i;

	pthread_mutex_lock(&vm->lock);
	for (i = 0; i < vm->n; i++) {
		struct sim_map *m = vm->maps[i];
		int k = snprintf(buf + n, len > n ? len - n : 0,
				 "ctx %u va 0x%llx size 0x%llx bo_offset 0x%llx access %s\n", ctx,
				 (unsigned long long)m->va, (unsigned long long)m->size,
				 (unsigned long long)m->bo_offset, access[m->access & SIM_VM_ACCESS]);

		if (k > 0)
			n += (size_t)k;
	}
	pthread_mutex_unlock(&vm->lock);
	return n;
}
