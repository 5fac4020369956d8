/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vivid, the virtual video test driver, as a foreign importer of vaccel
 * dma-bufs: its capture queue with V4L2_MEMORY_DMABUF writes frames into
 * the buffer. With the default allocator (vb2-vmalloc) the dma-buf is
 * vmapped when queued; with allocators=1 (vb2-dma-contig) it is attached
 * and mapped DMA_FROM_DEVICE when queued, and vmapped to fill it.
 *
 * Frames are 16x16 YUYV (512 bytes) on an input with a scaler, so that a
 * one-page buffer is physically contiguous, as dma-contig requires.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef VACCEL_VIVID_H
#define VACCEL_VIVID_H

#include <linux/videodev2.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include "vaccel_common.h"

/* Path of vivid's video capture node; 0 or -ENOENT if vivid is not loaded. */
static inline int vaccel_vivid_path(char *path, size_t len)
{
	char name[64], file[300];
	struct dirent *de;
	DIR *d = opendir("/sys/class/video4linux");
	int ret = -ENOENT;

	if (!d)
		return -ENOENT;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "video", 5))
			continue;
		snprintf(file, sizeof(file), "/sys/class/video4linux/%.64s/name", de->d_name);
		if (vaccel_read_file(file, name, sizeof(name)) < 0)
			continue;
		if (!strncmp(name, "vivid-000-vid-cap", 17)) {
			snprintf(path, len, "/dev/%.32s", de->d_name);
			ret = 0;
			break;
		}
	}
	closedir(d);
	return ret;
}

static inline int vaccel_xioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do
		ret = ioctl(fd, req, arg);
	while (ret && errno == EINTR);
	return ret ? -errno : 0;
}

/*
 * Open the capture node and set a 16x16 YUYV format on the first input
 * that can scale down to it; the fd, or -errno.
 */
static inline int vaccel_vivid_open(const char *path)
{
	struct v4l2_format fmt;
	int fd, input, ret;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (input = 1; input < 4; input++) {
		if (vaccel_xioctl(fd, VIDIOC_S_INPUT, &input))
			continue;
		memset(&fmt, 0, sizeof(fmt));
		fmt.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
		fmt.fmt.pix.width = 16;
		fmt.fmt.pix.height = 16;
		fmt.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
		fmt.fmt.pix.field = V4L2_FIELD_NONE;
		ret = vaccel_xioctl(fd, VIDIOC_S_FMT, &fmt);
		if (!ret && fmt.fmt.pix.sizeimage <= 4096)
			return fd;
	}
	close(fd);
	return -EINVAL;
}

/* REQBUFS for DMABUF capture buffers; 0 frees them (unmaps the dma-bufs). */
static inline int vaccel_vivid_reqbufs(int fd, unsigned int count)
{
	struct v4l2_requestbuffers req = {
		.count = count,
		.type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
		.memory = V4L2_MEMORY_DMABUF,
	};

	return vaccel_xioctl(fd, VIDIOC_REQBUFS, &req);
}

/* Queue @dmabuf as buffer 0; 0 or -errno. */
static inline int vaccel_vivid_qbuf(int fd, int dmabuf)
{
	struct v4l2_buffer buf = {
		.index = 0,
		.type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
		.memory = V4L2_MEMORY_DMABUF,
	};

	buf.m.fd = dmabuf;
	return vaccel_xioctl(fd, VIDIOC_QBUF, &buf);
}

static inline int vaccel_vivid_stream(int fd, bool on)
{
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;

	return vaccel_xioctl(fd, on ? VIDIOC_STREAMON : VIDIOC_STREAMOFF, &type);
}

/* Wait up to @ms for a filled buffer and dequeue it; 0 or -errno. */
static inline int vaccel_vivid_dqbuf(int fd, unsigned int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct v4l2_buffer buf = {
		.type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
		.memory = V4L2_MEMORY_DMABUF,
	};
	int ret = poll(&pfd, 1, (int)ms);

	if (ret < 0)
		return -errno;
	if (ret == 0)
		return -ETIME;
	return vaccel_xioctl(fd, VIDIOC_DQBUF, &buf);
}

/* Path of the vivid module file in the running kernel's tree. */
static inline int vaccel_vivid_ko(char *path, size_t len)
{
	struct utsname u;

	if (uname(&u))
		return -errno;
	snprintf(path, len, "/lib/modules/%s/kernel/drivers/media/test-drivers/vivid/vivid.ko",
		 u.release);
	return access(path, R_OK) ? -errno : 0;
}

/* Unload vivid and load it again with @params; 0 or -errno. */
static inline int vaccel_vivid_reload(const char *params)
{
	char ko[256];
	int fd, ret, tries;

	ret = vaccel_vivid_ko(ko, sizeof(ko));
	if (ret)
		return ret;
	/* a file closed just now may still be going away */
	for (tries = 0; tries < 100; tries++) {
		if (!syscall(SYS_delete_module, "vivid", O_NONBLOCK) || errno == ENOENT)
			break;
		if (errno != EAGAIN && errno != EBUSY)
			return -errno;
		vaccel_msleep(50);
	}
	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

#endif /* VACCEL_VIVID_H */
